/**
 * Events and transactions a run (issue 16): a no-op run in the embedded daemon (board and computer on
 * one file, its submits over HTTP on loopback, a real agent) writes every input a decision reads and no outbox
 * bookkeeping for the computer's own effects: its claims, spawns and completions are taken by the
 * commit that decided them and settled by the input that answers them. Nor does one actor's committed
 * decision come back as another's input: the run starts from its queue's `run.claimed`, and its queue
 * frees the lane from the run's `run.settled` (no `run.handed.over`, no `run.execution.ended`).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { startDaemon } from '../../apps/daemon/startDaemon.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { waitForTerminal } from '../e2e/support/cluster.ts';
import { tempDir } from '../support/tempStore.ts';

describe('the log of one run in the embedded daemon', () => {
  it('given runs one after another, then each writes no outbox.* event, at most 22 events (with the reply), in at most 11 transactions', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    const daemon = await startDaemon({ db, port: 0, exec: 'echo ok', slots: 2, budgetNote: false });
    try {
      const token = readFileSync(join(dir, 'token'), 'utf8').trim();
      const submit = async (i: number) => {
        const response = await fetch(`${daemon.url}/v1/runs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ lane: `lane-${i % 3}`, prompt: `run ${i}` }),
        });
        const id = ((await response.json()) as { run_id: string }).run_id;
        expect(await waitForTerminal(daemon.url!, id)).toMatchObject({ state: 'succeeded' });
        return id;
      };
      await submit(0);
      // The store's own count of committed transactions (each one fsync under --sync full).
      const commits = (daemon.store as unknown as { commits: Observable<readonly DomainEvent[]> }).commits;
      const batches: (readonly DomainEvent[])[] = [];
      const counting = commits.subscribe((batch) => batches.push(batch));
      const from = await daemon.store.headSeq();
      const runs = 5;
      const ids = new Set<string>();
      for (let i = 1; i <= runs; i++) ids.add(await submit(i));
      counting.unsubscribe();
      const to = await daemon.store.headSeq();
      const read = new Database(db, { readonly: true });
      const rows = read.prepare('SELECT type, data FROM events WHERE seq > ? AND seq <= ?').all(from, to) as { type: string; data: string }[];
      read.close();
      expect(rows.filter((r) => r.type.startsWith('outbox.')).map((r) => r.type)).toEqual([]);
      // Counted by run: what a loaded machine adds besides (a board's re-offer, say) is no run's.
      const ofRuns = (data: unknown) => ids.has((data as { runId?: string }).runId ?? '');
      expect(rows.filter((r) => ofRuns(JSON.parse(r.data))).length / runs).toBeLessThanOrEqual(22);
      expect(batches.filter((batch) => batch.some((e) => ofRuns(e.data))).length / runs).toBeLessThanOrEqual(11);
    } finally {
      await daemon.close();
    }
  });
});
