import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../events/catalog.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayEntity } from '../../replay/replayEntity.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { openSqliteStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { tempDir } from '../support/tempStore.ts';

/**
 * A board log written by runledger 0.1.0 as it was before reconnects cost one event: its computer
 * connected with three runs queued, and the board recorded one `board.run.offered` per run
 * (`runledger server`, `computer add c1`, three submits, then `daemon --server` running `echo ok`).
 */
const OLDER_BOARD = fileURLToPath(new URL('../fixtures/scenarios/olderBoard.db', import.meta.url));
/**
 * A board log written by runledger 0.1.0 (commit ba2eedd) before a reused Idempotency-Key with another
 * body was refused: `runledger server`, then two submits with one key and different prompts, both
 * answered with the first run and the second recorded as `board.run.deduplicated`.
 */
const OLDER_IDEMPOTENCY = fileURLToPath(new URL('../fixtures/scenarios/olderIdempotency.db', import.meta.url));
/**
 * A daemon's log written by the version before completions carried `usage` (main at 3d74690), which
 * already recorded the usage with the agent's exit: `runledger daemon --exec claude` (the Claude Code
 * stand-in) and two submits to one lane, the second resuming the first's session.
 */
const OLDER_USAGE = fileURLToPath(new URL('../fixtures/scenarios/olderUsage.db', import.meta.url));

/**
 * A board log written by the version before settled runs left the board's state (main at 48c2f01),
 * whose requests about a settled run carry no `past` (its state still held the run): through the real
 * deciders (test/fixtures/scenarios/recorder.ts, as record.ts does), r1 claimed by c1 and succeeded,
 * then its completion sent again, a late reply, claims by c2 and c1 and a cancel; r2 cancelled before
 * any claim, then claimed and cancelled again; r3 reaped, then its completion and a claim arrived late.
 */
const OLDER_SETTLED = fileURLToPath(new URL('../fixtures/scenarios/olderSettled.db', import.meta.url));

/** Replays a copy of `fixture` (opening a log brings its schema forward), after `check` has read it. */
async function replaysWhole(fixture: string, check: (log: DomainEvent[]) => void): Promise<void> {
  const path = join(tempDir(), 'board.db');
  copyFileSync(fixture, path);
  const store = await openSqliteStore(path);
  try {
    const log = await store.readAll(0, 1000);
    check(log);
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true, lastSeq: log.length });
  } finally {
    await store.close();
  }
}

describe('a board log of an older version', () => {
  it('replays: a connect recorded with its per-run offers is re-derived as it was taken', async () => {
    await replaysWhole(OLDER_BOARD, (log) => {
      expect(log.filter((e) => e.type === 'board.run.offered' && e.data.reason === 're-offered: computer c1 connected')).toHaveLength(3);
    });
  });

  it('replays: a key reused with another body, recorded before such a reuse was refused, is decided as it was (deduplicated)', async () => {
    await replaysWhole(OLDER_IDEMPOTENCY, (log) => {
      expect(log.filter((e) => e.type === 'board.run.submitted').map((e) => e.data.prompt)).toEqual(['first', 'second']);
      expect(log.filter((e) => e.type === 'board.run.deduplicated')).toHaveLength(1);
    });
  });

  it('replays: a completion decided without usage, by a version that recorded usage only with the exit, is re-derived as it was taken', async () => {
    await replaysWhole(OLDER_USAGE, (log) => {
      expect(log.filter((e) => e.type === 'run.process.exited' && e.data.usage !== undefined)).toHaveLength(2);
      expect(log.filter((e) => e.type === 'run.completion.requested').map((e) => 'usage' in e.data)).toEqual([false, false]);
    });
  });

  it('replays: requests about a settled run, recorded before they carried its past, are decided from its end earlier in the log, whole and run by run', async () => {
    await replaysWhole(OLDER_SETTLED, (log) => {
      const requests = ['board.claim.requested', 'board.cancel.requested', 'board.reply.received', 'board.completion.received'];
      expect(log.filter((e) => requests.includes(e.type)).some((e) => 'past' in e.data)).toBe(false);
      expect(log.filter((e) => e.type === 'board.request.refused').map((e) => e.data.code)).toEqual([
        ...['already_terminal', 'already_terminal', 'gone', 'gone', 'already_terminal'],
        ...['gone', 'already_terminal'],
        ...['already_terminal', 'gone'],
      ]);
    });
    const path = join(tempDir(), 'board.db');
    copyFileSync(OLDER_SETTLED, path);
    const store = await openSqliteStore(path);
    try {
      for (const runId of ['r1', 'r2', 'r3']) {
        const report = (await replayEntity(store, deciders, 'run', runId))!;
        expect(report.difference, runId).toBeNull();
        expect(report.ok, runId).toBe(true);
      }
    } finally {
      await store.close();
    }
  });
});
