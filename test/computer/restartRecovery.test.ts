import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_BY_RESTART } from '../../actors/run/runState.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { running, until } from '../run/execution/agents.ts';
import { fixtureAgent, startRuns, waitForEvent } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore, tempDbPath, tempDir } from '../support/tempStore.ts';

describe('a computer restarted over a run that was executing', () => {
  it('given its process outlived the daemon, then the run is not executed again, the leftover group is killed, and it completes as interrupted', async () => {
    const path = tempDbPath();
    const clock = new FakeClock();
    const marker = join(tempDir(), 'executions');
    const exec = fixtureAgent('lingering.mjs', marker);
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

describe('a computer restarted while a completion was on its way to the board', () => {
  it('given the completion was taken by its decision and never answered, then the next life sends it again and the run settles once, with no outbox bookkeeping', async () => {
    const path = tempDbPath();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'quick', timeoutS: 0 });
    board.holdCompletions('r1');
    const workspaceRoot = tempDir();

    const before = await openTempStore(path);
    const first = await startRuns(before, clock, board, { exec: 'echo ok', workspaceRoot });
    await first.claimAndHandOver('r1');
    await waitForEvent(before, 'r1', 'run.completion.requested');
    await until(() => board.callsOf('r1', 'complete').length === 1, 10_000, 'the completion was never sent');
    first.crash();
    // The first call is never answered, as to a killed daemon; the next life's calls are.
    board.holdCompletions('r1')();

    const after = await openTempStore(path);
    await startRuns(after, clock, board, { exec: 'echo ok', workspaceRoot });
    expect(await waitForEvent(after, 'r1', 'run.settled')).toMatchObject({ data: { reported: true } });
    const calls = board.callsOf('r1', 'complete');
    expect(calls).toHaveLength(2);
    expect(calls[1]).toMatchObject({ result: { ok: true } });
    const log = await after.readAll(0, 1_000);
    expect(log.filter((e) => e.type === 'run.settled')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'run.process.began')).toHaveLength(1);
    expect(log.filter((e) => e.stream.startsWith('outbox:'))).toEqual([]);
    expect(await replayLog(after, deciders)).toMatchObject({ ok: true });
  });
});
