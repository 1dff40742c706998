import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_BY_RESTART } from '../../actors/run/runState.ts';
import { running } from '../run/execution/agents.ts';
import { fixtureAgent } from '../support/computerRuns.ts';
import { DaemonProcess, waitUntil } from '../support/daemonProcess.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';

describe('runledger daemon, SIGKILLed while a run executes and started again on the same log', () => {
  it("given the run's agent outlived it, then the run is not executed again, its group is killed, it completes as interrupted, and the log replays", async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    const marker = join(dir, 'executions');
    const args = ['--exec', fixtureAgent('lingering.mjs', marker), '--heartbeat-s', '1'];
    // Whole lines only: the agent's append creates the file before it writes its line, and an
    // empty file read in between once gave the agent's pid as NaN (CI, a full run).
    const lines = () => readFileSync(marker, 'utf8').match(/^started \d+\n/gm) ?? [];

    const first = await DaemonProcess.start(db, args);
    const runId = await first.submit('A', 'a long job', 0);
    await waitUntil('the run to execute', () => {
      try {
        return lines().length === 1;
      } catch {
        return false;
      }
    });
    const agent = Number(lines()[0]!.trim().split(' ')[1]);
    first.signal('SIGKILL');
    await first.exit();
    expect(running(agent), `agent ${agent} gone before the restart; the daemon said:\n${first.output}`).toBe(true);

    const second = await DaemonProcess.start(db, args);
    expect(await second.terminal(runId)).toMatchObject({ state: 'failed', error: INTERRUPTED_BY_RESTART });
    await waitUntil(`the leftover agent ${agent} to be killed`, () => !running(agent), 10_000);
    expect(lines()).toHaveLength(1);

    second.signal('SIGTERM');
    expect((await second.exit()).code).toBe(0);
    const replay = await runInProcess(['replay', '--db', db]);
    expect(replay.stderr).toBe('');
    expect(replay.status).toBe(0);
  });
});
