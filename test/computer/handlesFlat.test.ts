/**
 * Memory flat in runs handled (issue 16): a run that ended leaves nothing live in the daemon, no timer
 * (a budget's, an actor's passivation), no handle, no actor. Counted in this very process, where an
 * embedded daemon (board and computer, real HTTP on loopback, real agents) runs them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDaemon } from '../../apps/daemon/startDaemon.ts';
import { waitFor, waitForTerminal } from '../e2e/support/cluster.ts';
import { tempDir } from '../support/tempStore.ts';

function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

describe('runs that ended leave nothing live behind', () => {
  it('given 30 fast runs after 3, then the live timers and handles of the daemon are as many as after the 3', async () => {
    const dir = tempDir();
    const daemon = await startDaemon({ db: join(dir, 'runledger.db'), port: 0, exec: 'echo ok', slots: 4, budgetNote: false });
    try {
      const token = readFileSync(join(dir, 'token'), 'utf8').trim();
      const runMany = async (n: number, from: number) => {
        // One at a time: the test's own HTTP client keeps a socket per request in flight.
        const ids: string[] = [];
        for (let i = from; i < from + n; i++) {
          const response = await fetch(`${daemon.url}/v1/runs`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ lane: `lane-${i % 5}`, prompt: `run ${i}` }),
          });
          ids.push(((await response.json()) as { run_id: string }).run_id);
        }
        for (const id of ids) expect(await waitForTerminal(daemon.url!, id)).toMatchObject({ state: 'succeeded', reply: 'ok' });
      };
      await runMany(3, 0);
      const before = resources();
      await runMany(30, 3);
      // A socket or two of the HTTP client may come and go, and the last runs' pipes and exits settle
      // a moment after their ends were recorded (later on a loaded machine): what a run leaks would be
      // 30 more, and never settle.
      const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
      const settled = () => {
        const after = resources();
        return (after.Timeout ?? 0) <= (before.Timeout ?? 0) + 2 && total(after) <= total(before) + 4 ? after : null;
      };
      const after = await waitFor('the handles of ended runs to settle', settled, 10_000, 50).catch(() => resources());
      expect(after.Timeout ?? 0).toBeLessThanOrEqual((before.Timeout ?? 0) + 2);
      expect(total(after)).toBeLessThanOrEqual(total(before) + 4);
    } finally {
      await daemon.close();
    }
  });
});
