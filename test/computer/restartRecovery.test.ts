import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_BY_RESTART } from '../../actors/run/runState.ts';
import { FakeClock } from '../../actors/runtime/clock.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { running, until } from '../run/execution/agents.ts';
import { nodeAgent, startRuns, waitForEvent } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore, tempDbPath, tempDir } from '../support/tempStore.ts';

describe('a computer restarted over a run that was executing', () => {
  it('given its process outlived the daemon, then the run is not executed again, the leftover group is killed, and it completes as interrupted', async () => {
    const path = tempDbPath();
    const clock = new FakeClock();
    const marker = join(tempDir(), 'executions');
    const exec = nodeAgent('lingering.mjs', marker);
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'long job', timeoutS: 0 });
    const workspaceRoot = tempDir();

    const before = await openTempStore(path);
    const first = await startRuns(before, clock, board, { exec, workspaceRoot });
    await first.claimAndHandOver('r1');
    const began = await waitForEvent(before, 'r1', 'run.process.began');
    await until(() => existsSync(marker), 10_000, 'the agent never started');
    first.crash();

    const after = await openTempStore(path);
    const second = await startRuns(after, clock, board, { exec, workspaceRoot, killGraceMs: 1_000 });
    const interrupted = await waitForEvent(after, 'r1', 'run.found.interrupted');
    expect(interrupted.data).toEqual({ runId: 'r1', pid: began.data.pid, alive: true });
    await until(() => !running(began.data.pid), 10_000, `the leftover process group ${began.data.pid} was not killed`);
    expect(await waitForEvent(after, 'r1', 'run.settled')).toMatchObject({ data: { reported: true } });
    expect(board.callsOf('r1', 'complete')).toMatchObject([{ result: { ok: false, error: INTERRUPTED_BY_RESTART } }]);
    expect(readFileSync(marker, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(second.runs.liveRuns()).toEqual([]);
    expect(await replayLog(after, deciders)).toMatchObject({ ok: true });
  });
});
