import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type QueueReason, wordQueueReason } from '../../events/queueReasons.ts';
import { running } from '../run/execution/agents.ts';
import { fixtureAgent } from '../support/computerRuns.ts';
import { DaemonProcess, logRows, waitUntil } from '../support/daemonProcess.ts';
import { tempDir } from '../support/tempStore.ts';

/** The pids a marker file of lingering.mjs holds, one per execution. */
function executions(marker: string): number[] {
  if (!existsSync(marker)) return [];
  return readFileSync(marker, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => Number(line.split(' ')[1]));
}

describe('runledger daemon, shut down by a signal', () => {
  it('given one executing run and --drain-s 2, then nothing new starts, the run gets its drain time, is killed and completed as failed, and the daemon exits 0', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    const marker = join(dir, 'executions');
    const daemon = await DaemonProcess.start(db, ['--exec', fixtureAgent('lingering.mjs', marker), '--drain-s', '2', '--heartbeat-s', '1']);
    const executing = await daemon.submit('A', 'a long job');
    await waitUntil('the run to execute', () => executions(marker).length === 1);
    const [agent] = executions(marker) as [number];

    const signalledAt = Date.now();
    daemon.signal('SIGTERM');
    await daemon.waitForOutput(/draining/);
    const arrivedDuringDrain = await daemon.submit('B', 'too late');
    const { code } = await daemon.exit();
    const took = Date.now() - signalledAt;

    expect(code).toBe(0);
    expect(took).toBeGreaterThanOrEqual(2_000);
    expect(running(agent)).toBe(false);
    expect(executions(marker)).toEqual([agent]);
    const rows = logRows(db);
    const ofRun = (runId: string) => rows.filter((r) => r.data.runId === runId);
    expect(ofRun(executing).find((r) => r.type === 'run.process.exited')?.data.outcome).toBe('killed');
    expect(ofRun(executing).find((r) => r.type === 'run.completion.requested')?.data.result).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^killed before it finished/),
    });
    expect(ofRun(executing).find((r) => r.type === 'run.settled')?.data).toMatchObject({ reported: true });
    // The run that arrived meanwhile was answered "retry later", and left to the board.
    expect(
      ofRun(arrivedDuringDrain)
        .filter((r) => r.type === 'frame.acknowledged')
        .map((r) => [r.data.status, wordQueueReason(r.data.reason as QueueReason)]),
    ).toEqual([[503, 'draining']]);
    expect(ofRun(arrivedDuringDrain).map((r) => r.type)).not.toContain('run.claim.started');
  });

  it("given a second signal while it drains, then it exits at once, taking its agents' process groups with it", async () => {
    const dir = tempDir();
    const marker = join(dir, 'executions');
    const daemon = await DaemonProcess.start(join(dir, 'runledger.db'), ['--exec', fixtureAgent('lingering.mjs', marker), '--drain-s', '60']);
    await daemon.submit('A', 'a long job');
    await waitUntil('the run to execute', () => executions(marker).length === 1);

    daemon.signal('SIGTERM');
    await daemon.waitForOutput(/draining/);
    const secondAt = Date.now();
    daemon.signal('SIGTERM');
    await daemon.exit(5_000);
    expect(Date.now() - secondAt).toBeLessThan(2_000);
    // An agent left behind would go on working, and spending, for a run nobody will report.
    const [agent] = executions(marker) as [number];
    await waitUntil(`agent ${agent} to die with its daemon`, () => !running(agent), 2_000);
  });
});
