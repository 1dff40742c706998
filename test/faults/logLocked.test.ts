/**
 * A log locked from outside (issue 31): a user holds the write lock of a daemon's log in the stock
 * `sqlite3` shell (`BEGIN IMMEDIATE`) while its agents finish. The daemon must stay responsive, record
 * every agent's exit once the lock goes, free every slot, and still exit within its drain time when
 * signalled while the lock is held (docs/rules.md#the-log). The two cases wait out the lock on a
 * daemon, a log and a shell of their own each: they run at once (describe.concurrent).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'vitest';
import { isRunning, lines, MARKER_AGENT } from '../e2e/support/cluster.ts';
import { DaemonProcess, logRows, waitUntil } from '../support/daemonProcess.ts';
import { SqliteShell } from '../support/sqliteShell.ts';
import { tempDir } from '../support/tempStore.ts';
import { ownScope } from '../support/testScope.ts';

/**
 * Far past the store's own patience with a lock (1 s; then an outage whose writers retry at waits
 * doubling to 5 s, several of them inside the hold) and past the agents' answers; the busy wait of
 * 10 s that once froze the daemon would leave /healthz silent through it. A longer hold proves no more.
 */
const HOLD_MS = 6_000;

/** `GET /healthz`'s time to answer, in ms (a board that does not answer in 5 s counts 5 s). */
async function healthLatency(url: string): Promise<number> {
  const began = performance.now();
  try {
    const answer = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
    if (answer.status !== 200) throw new Error(`/healthz answered ${answer.status}`);
  } catch (error) {
    if ((error as Error).name !== 'TimeoutError') throw error;
  }
  return performance.now() - began;
}

function agentFiles(dir: string): { env: NodeJS.ProcessEnv; pids: () => number[] } {
  const [markers, pids] = [join(dir, 'markers'), join(dir, 'pids')];
  return { env: { ...process.env, MARKER_FILE: markers, MARKER_PIDS: pids }, pids: () => lines(pids).map(Number) };
}

async function submitFour(daemon: DaemonProcess, sleepMs: number): Promise<string[]> {
  const runs: string[] = [];
  for (let i = 0; i < 4; i++) runs.push(await daemon.submit(`lane-${i}`, `marker=m${i} sleep=${sleepMs}`));
  return runs;
}

describe.concurrent('a log locked from outside by the sqlite3 shell', () => {
  it(
    'given BEGIN IMMEDIATE held 6 s while 4 runs finish, then /healthz answers meanwhile, every exit is recorded once the lock goes, every slot is freed, and SIGTERM exits within the drain',
    ownScope(async ({ expect }) => {
      const dir = tempDir();
      const db = join(dir, 'runledger.db');
      const agents = agentFiles(dir);
      const daemon = await DaemonProcess.start(db, ['--exec', MARKER_AGENT, '--slots', '4', '--drain-s', '5', '--budget-note', 'off'], {
        env: agents.env,
      });
      const runs = await submitFour(daemon, 1_500);
      await waitUntil('4 agents executing', () => agents.pids().length === 4);

      const lock = await SqliteShell.open(db, 'write');
      const lockedAt = Date.now();
      let slowest = 0;
      while (Date.now() - lockedAt < HOLD_MS) {
        slowest = Math.max(slowest, await healthLatency(daemon.url));
        await new Promise((r) => setTimeout(r, 200));
      }
      // The agents answered while nothing could be recorded.
      expect(agents.pids().filter(isRunning)).toEqual([]);
      // A submit meanwhile is refused at once, and says why.
      const token = readFileSync(join(dirname(db), 'token'), 'utf8').trim();
      const submitAt = performance.now();
      const refused = await fetch(`${daemon.url}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ lane: 'late', prompt: 'marker=late' }),
      });
      const submitMs = performance.now() - submitAt;
      await lock.close();

      expect(slowest).toBeLessThan(2_000);
      expect(submitMs).toBeLessThan(2_000);
      expect(refused.status).toBe(507);
      expect(await refused.json()).toMatchObject({
        detail: { error: 'log_unwritable', message: expect.stringMatching(/locked by another process/) },
      });
      expect(daemon.output).toMatch(
        new RegExp(`the log ${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be written: it is locked by another process`),
      );
      for (const [i, runId] of runs.entries())
        expect(await daemon.terminal(runId, 15_000)).toMatchObject({ state: 'succeeded', reply: `done m${i}` });
      await waitUntil('every slot freed', async () => {
        const status = (await (await fetch(`${daemon.url}/v1/status`)).json()) as { computers: Record<string, { inUse: number }> };
        return status.computers.local?.inUse === 0;
      });

      const signalledAt = Date.now();
      daemon.signal('SIGTERM');
      expect((await daemon.exit(10_000)).code).toBe(0);
      expect(Date.now() - signalledAt).toBeLessThan(5_000);
      const rows = logRows(db);
      for (const [i, runId] of runs.entries()) {
        const exits = rows.filter((r) => r.type === 'run.process.exited' && r.data.runId === runId);
        expect(exits.map((r) => r.data)).toMatchObject([{ outcome: 'exited', exitCode: 0, reply: `done m${i}` }]);
      }
      expect(daemon.output).not.toMatch(/could not be recorded/);
    }),
    60_000,
  );

  it(
    'given SIGTERM while the lock is still held, then the daemon exits within its drain time, saying what it could not record',
    ownScope(async ({ expect }) => {
      const dir = tempDir();
      const db = join(dir, 'runledger.db');
      const agents = agentFiles(dir);
      const daemon = await DaemonProcess.start(db, ['--exec', MARKER_AGENT, '--slots', '4', '--drain-s', '2', '--budget-note', 'off'], {
        env: agents.env,
      });
      await submitFour(daemon, 1_500);
      await waitUntil('4 agents executing', () => agents.pids().length === 4);
      const lock = await SqliteShell.open(db, 'write');
      await waitUntil('the agents to exit', () => agents.pids().every((pid) => !isRunning(pid)));

      const signalledAt = Date.now();
      daemon.signal('SIGTERM');
      const { code } = await daemon.exit(15_000);
      const took = Date.now() - signalledAt;
      await lock.close();

      expect(code).toBe(0);
      expect(took).toBeLessThan(2_000 + 3_000);
      expect(daemon.output).toMatch(/its write lock is held by pid \d+ \(sqlite3\)/);
      // What it could not record is said, in its last line too; the next start completes those runs as failed.
      expect(daemon.output).toMatch(
        /stopped \(shutdown signal, exit 0\): computer local: 4 turns whose end could not be recorded \(the log cannot be written: it is locked by another process\)/,
      );
    }),
    60_000,
  );
});
