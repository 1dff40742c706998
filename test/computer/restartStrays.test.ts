/**
 * What an interrupted turn's agent left running, swept by the next life (docs/rules.md#computer-behaviour,
 * "Execution"): a daemon SIGKILLed mid-turn leaves its agent, the agent's children and a grandchild in a
 * session of its own; the next life on that log stops all of them, not only the agent's process group.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isProcessAlive } from '../../runtime/actors/processes.ts';
import { eventsOf, readLog, startBoard, submit, waitForTerminal } from '../e2e/support/cluster.ts';
import { fixtureAgent } from '../support/computerRuns.ts';
import { waitUntil } from '../support/daemonProcess.ts';
import { tempDir } from '../support/tempStore.ts';

describe('a daemon killed mid-turn, started again', () => {
  it('stops what its agent left running, the setsid grandchild included, and records what it stopped', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    const pidFile = join(dir, 'pids');
    // The escapee ignores SIGTERM: it is stopped at the kill grace's end, 1 s here (5 s by default).
    const args = ['--exec', fixtureAgent('strays.mjs', pidFile, 'stay'), '--kill-grace-s', '1'];
    const first = await startBoard(db, { command: 'daemon', args });
    await first.process.waitForOutput(/push stream connected/);
    const runId = await submit(first, 'A', 'go');
    await waitUntil('the agent to start its child and its escapee', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'));
    const [child, escapee] = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number) as [number, number];
    onTestFinished(() => {
      for (const pid of [child, escapee]) if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
    });
    await first.process.stop('SIGKILL');
    expect(isProcessAlive(escapee)).toBe(true);

    const second = await startBoard(db, { command: 'daemon', args });
    expect(await waitForTerminal(second.url, runId)).toMatchObject({ state: 'failed' });
    await waitUntil('the escapee and the child to be stopped', () => !isProcessAlive(escapee) && !isProcessAlive(child));
    await waitUntil('the stop to be recorded', () =>
      eventsOf(readLog(db), 'outbox.performed').some((e) => String(e.data.detail).includes(String(escapee))),
    );
    await second.process.stop('SIGTERM');
  });
});
