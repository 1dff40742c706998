import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { CANCELLED_MARKER } from '../../actors/run/runState.ts';
import type { RunEnd } from '../../apps/computer/computerRuns.ts';
import { laneSessionsProjection } from '../../projections/laneSessions.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { hydrateProjections } from '../../runtime/folds/hydrate.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { running, until } from '../run/execution/agents.ts';
import { claudeAgent, fixtureAgent, runStream, startRuns, typesOf, waitForEvent } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore, tempDir } from '../support/tempStore.ts';

/** The session each lane of computer c1 resumes next, as the log says. */
async function laneSessions(store: EventStore): Promise<Record<string, string>> {
  const folded = await hydrateProjections(store, [laneSessionsProjection]);
  return (folded.get(laneSessionsProjection.name)!.state as Record<string, Record<string, string>>).c1 ?? {};
}

async function settled(store: EventStore, runId: string) {
  return (await waitForEvent(store, runId, 'run.settled')).data;
}

/** Waits (bounded, real time) for a file an agent writes, and returns its text. */
async function fileOf(path: string): Promise<string> {
  await until(() => existsSync(path) && readFileSync(path, 'utf8').includes('\n'), 10_000, `nothing was written to ${path}`);
  return readFileSync(path, 'utf8');
}

describe('a claimed run, executed by its computer against a stand-in board', () => {
  it('given an agent that names its session and then hangs, when the budget runs out, then the lane keeps the session and the completion carries the salvaged tail', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'find the cause', timeoutS: 60 });
    const { claimAndHandOver } = await startRuns(store, clock, board, { exec: claudeAgent('hang.mjs', 'claude', 'sess-42') });

    await claimAndHandOver('r1');
    await waitForEvent(store, 'r1', 'lane.session.remembered');
    expect(await laneSessions(store)).toEqual({ L: 'sess-42' });

    clock.advance(60_000);
    expect((await waitForEvent(store, 'r1', 'run.process.exited')).data.outcome).toBe('timed_out');
    await settled(store, 'r1');
    const [complete] = board.callsOf('r1', 'complete');
    expect(complete).toMatchObject({
      result: { ok: false, error: 'timed out after about 1 minute, its budget — unfinished answer: …Half of the answer: the cause is' },
    });
    expect(board.callsOf('r1', 'reply')).toEqual([]);
    expect(await typesOf(store, 'r1')).not.toContain('lane.session.forgotten');
    expect(await laneSessions(store)).toEqual({ L: 'sess-42' });
  });

  it('given an agent that ignores SIGTERM, when its budget runs out, then SIGKILL follows after the grace, and not before', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const notes = join(tempDir(), 'stubborn.txt');
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'p', timeoutS: 30 });
    const { claimAndHandOver } = await startRuns(store, clock, board, { exec: fixtureAgent('stubborn.mjs', notes), killGraceMs: 5_000 });

    await claimAndHandOver('r1');
    const pid = Number(/ready (\d+)/.exec(await fileOf(notes))?.[1]);
    clock.advance(30_000);
    await until(() => readFileSync(notes, 'utf8').includes('TERM'), 10_000, 'the agent never got its SIGTERM');
    clock.advance(4_999);
    await new Promise((r) => setTimeout(r, 100));
    expect(running(pid)).toBe(true);
    expect(await typesOf(store, 'r1')).not.toContain('run.process.exited');

    clock.advance(1);
    const exited = await waitForEvent(store, 'r1', 'run.process.exited');
    expect(exited.data.outcome).toBe('timed_out');
    expect(running(pid)).toBe(false);
    expect((await settled(store, 'r1')).reported).toBe(true);
    expect(board.callsOf('r1', 'complete')[0]).toMatchObject({ result: { ok: false } });
  });

  it('given a remembered session the agent refuses to resume, then it is forgotten and the turn runs fresh inside the same deadline', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    // What an earlier turn of lane L left: a session the agent no longer has.
    await store.append({
      expected: { 'c1/run:r0': 0 },
      events: [
        { stream: 'c1/run:r0', type: 'lane.session.remembered', data: { lane: 'L', sessionId: 'stale-session', runId: 'r0' }, at: clock.now() },
      ],
    });
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'carry on', timeoutS: 600 });
    const { claimAndHandOver } = await startRuns(store, clock, board, { exec: claudeAgent('claude-like.sh') });

    await claimAndHandOver('r1');
    expect((await settled(store, 'r1')).reported).toBe(true);
    const events = await store.readStream(runStream('r1'));
    const requested = events.filter((e) => e.type === 'run.execution.requested').map((e) => e.data);
    expect(requested).toEqual([
      // The first, decided from its queue's claim, records the budget its deadline came from.
      { runId: 'r1', lane: 'L', deadlineAt: clock.now() + 600_000, resume: 'stale-session', budgetS: 600 },
      { runId: 'r1', lane: 'L', deadlineAt: clock.now() + 600_000, resume: null },
    ]);
    expect(events.filter((e) => e.type === 'run.process.began').map((e) => e.data.resuming)).toEqual(['stale-session', null]);
    expect(events.find((e) => e.type === 'lane.session.forgotten')?.data).toMatchObject({
      sessionId: 'stale-session',
      reason: { code: 'resume.refused' },
    });
    expect(board.callsOf('r1', 'reply')[0]).toMatchObject({ text: expect.stringMatching(/^fresh: You have about 10 minutes for this turn\./) });
    expect(board.callsOf('r1', 'complete')[0]).toMatchObject({ result: { ok: true } });
    expect(await laneSessions(store)).toEqual({ L: 'fresh-session' });
  });

  it('given a cancel asked for while it executes, then its whole process group dies, grandchild included, and it completes with exactly the marker', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const pids = join(tempDir(), 'pids');
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'p' });
    const { claimAndHandOver, runs } = await startRuns(store, clock, board, {
      exec: fixtureAgent('family.mjs', pids),
      heartbeatMs: 1_000,
      killGraceMs: 2_000,
    });

    await claimAndHandOver('r1');
    const [agent, grandchild] = (await fileOf(pids)).trim().split(' ').map(Number) as [number, number];
    board.cancel('r1');
    clock.advance(1_000);
    await waitForEvent(store, 'r1', 'run.kill.requested');
    await until(() => !running(agent), 10_000, 'the agent survived its SIGTERM');
    // The grandchild ignores SIGTERM: only the SIGKILL after the grace ends it, and the run with it.
    expect(running(grandchild)).toBe(true);
    clock.advance(2_000);
    const exited = await waitForEvent(store, 'r1', 'run.process.exited');
    expect(exited.data.outcome).toBe('cancelled');
    expect(running(grandchild)).toBe(false);
    expect((await settled(store, 'r1')).reported).toBe(true);
    expect(board.callsOf('r1', 'complete').map((c) => c.call === 'complete' && c.result)).toEqual([{ ok: false, error: CANCELLED_MARKER }]);
    expect(board.callsOf('r1', 'reply')).toEqual([]);
    expect(runs.liveRuns()).toEqual([]);
  });

  it('given an agent that answers and exits leaving a child on its stdout and a setsid grandchild, then both are killed at its end and its recorded exit names them', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const pids = join(tempDir(), 'pids');
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'p' });
    const { claimAndHandOver } = await startRuns(store, clock, board, { exec: fixtureAgent('strays.mjs', pids), killGraceMs: 300 });

    await claimAndHandOver('r1');
    const [child, escapee] = (await fileOf(pids)).trim().split(' ').map(Number) as [number, number];
    // The child holds the output open: the run stops waiting for it once the drain time (on the clock) is out.
    const exited = await vi.waitFor(
      async () => {
        clock.advance(2_000);
        return await waitForEvent(store, 'r1', 'run.process.exited', 50);
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(exited.data).toMatchObject({ outcome: 'exited', exitCode: 0, reply: 'ok' });
    expect(exited.data.strays?.map((s) => s.pid).sort((a, b) => a - b)).toEqual([child, escapee].sort((a, b) => a - b));
    expect(exited.data.strays?.every((s) => s.command === 'node')).toBe(true);
    expect(running(child)).toBe(false);
    expect(running(escapee)).toBe(false);
    expect((await settled(store, 'r1')).reported).toBe(true);
  });

  it('given the board resolved it mid-run, then the process is killed and nothing reaches the board: no reply, no completion', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const marker = join(tempDir(), 'executions');
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'p' });
    const { claimAndHandOver, runs } = await startRuns(store, clock, board, { exec: fixtureAgent('lingering.mjs', marker), heartbeatMs: 1_000 });

    await claimAndHandOver('r1');
    const pid = Number(/started (\d+)/.exec(await fileOf(marker))?.[1]);
    board.resolve('r1');
    clock.advance(1_000);
    expect((await waitForEvent(store, 'r1', 'run.process.exited')).data.outcome).toBe('killed');
    expect(await settled(store, 'r1')).toMatchObject({ reported: false });
    expect(running(pid)).toBe(false);
    expect(board.calls.filter((c) => c.call === 'reply' || c.call === 'complete')).toEqual([]);
    expect(runs.liveRuns()).toEqual([]);
    expect(await typesOf(store, 'r1')).not.toContain('run.completion.requested');
  });

  it('given a reply the board refuses, then the session the turn announced is forgotten and the run completes failed, saying so, without retrying the reply', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    await store.append({
      expected: { 'c1/run:r0': 0 },
      events: [
        { stream: 'c1/run:r0', type: 'lane.session.remembered', data: { lane: 'L', sessionId: 'known-session', runId: 'r0' }, at: clock.now() },
      ],
    });
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'carry on' });
    board.refuseReplies('r1', 413);
    const { claimAndHandOver } = await startRuns(store, clock, board, { exec: claudeAgent('claude-like.sh') });

    await claimAndHandOver('r1');
    expect(await settled(store, 'r1')).toMatchObject({ reported: true });
    expect(board.callsOf('r1', 'reply')).toHaveLength(1);
    expect(board.callsOf('r1', 'complete')).toMatchObject([{ result: { ok: false, error: 'posting the reply failed with HTTP 413' } }]);
    expect((await store.readStream(runStream('r1'))).find((e) => e.type === 'lane.session.forgotten')?.data).toMatchObject({
      sessionId: 'known-session',
      reason: { code: 'reply.refused' },
    });
    expect(await laneSessions(store)).toEqual({});
  });

  it('given a completion that fails three times, then it is sent again after 1, 3 and 9 s while heartbeats go on, and settles on the fourth', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'hello' });
    board.failCompletions('r1', 503, 0, 502);
    const { claimAndHandOver, runs } = await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh'), heartbeatMs: 1_000 });

    await claimAndHandOver('r1');
    const completions = () => board.callsOf('r1', 'complete').length;
    await vi.waitFor(() => expect(completions()).toBe(1), { timeout: 10_000 });
    for (const [wait, sent] of [
      [1_000, 2],
      [3_000, 3],
      [9_000, 4],
    ] as const) {
      await waitForRetry(store, 'r1', sent - 1);
      expect(runs.liveRuns()).toEqual(['r1']);
      const beats = board.callsOf('r1', 'heartbeat').length;
      // Time passes a second at a time, as it does: the heartbeats of a run waiting to be reported go on.
      for (let s = 0; s < wait / 1_000 - 1; s++) clock.advance(1_000);
      expect(completions()).toBe(sent - 1);
      clock.advance(1_000);
      await vi.waitFor(() => expect(completions()).toBe(sent), { timeout: 5_000 });
      expect(board.callsOf('r1', 'heartbeat').length).toBeGreaterThanOrEqual(beats + wait / 1_000 - 1);
    }
    expect(await settled(store, 'r1')).toMatchObject({ reported: true });
    const retries = (await store.readStream(runStream('r1'))).filter((e) => e.type === 'run.completion.retrying');
    expect(retries.map((e) => (e.type === 'run.completion.retrying' ? e.data.notBefore - e.at : 0))).toEqual([1_000, 3_000, 9_000]);
    expect(board.callsOf('r1', 'reply').length).toBe(4);
    expect(runs.liveRuns()).toEqual([]);
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
  });

  it('given a completion the board never acknowledges, then the run keeps its slot and lane through the retries, gives them back once paused, stays unreported and heartbeated, and a redelivery reports it', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'hello' });
    board.failCompletions('r1', ...Array<number>(9).fill(503));
    const ended = vi.fn(async (_ended: RunEnd) => {});
    const { claimAndHandOver, runs } = await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh'), heartbeatMs: 60_000, ended });

    await claimAndHandOver('r1');
    const completions = () => board.callsOf('r1', 'complete').length;
    await vi.waitFor(() => expect(completions()).toBe(1), { timeout: 10_000 });
    for (const [i, wait] of [1, 3, 9, 30, 60, 120, 180, 240].entries()) {
      await waitForRetry(store, 'r1', i + 1);
      // The board keeps the lane's turn open until a completion reaches it: all through the retries the
      // run keeps its slot and lane, or the lane's next run would be claimed only to be told busy.
      expect(ended).not.toHaveBeenCalled();
      clock.advance(wait * 1_000);
      await vi.waitFor(() => expect(completions()).toBe(i + 2), { timeout: 5_000 });
    }
    await vi.waitFor(async () => expect((await store.readStream(runStream('r1'))).some((e) => e.type === 'run.completion.paused')).toBe(true), {
      timeout: 5_000,
    });
    // Given up as unreported: the slot and lane go back now (a redelivery may still report it), with
    // what the execution itself came to: it succeeded, only its report is missing.
    await vi.waitFor(() => expect(ended).toHaveBeenCalledTimes(1));
    expect(ended.mock.calls[0]![0]).toMatchObject({
      type: 'run.completion.paused',
      data: { result: { ok: true }, reason: { code: 'unacknowledged', attempts: 9 } },
    });
    expect(runs.liveRuns()).toEqual(['r1']);
    clock.advance(60_000);
    expect(board.callsOf('r1', 'heartbeat').length).toBeGreaterThan(0);

    await runs.redelivered('r1');
    await vi.waitFor(() => expect(completions()).toBe(10), { timeout: 5_000 });
    expect(await settled(store, 'r1')).toMatchObject({ reported: true });
    expect(runs.liveRuns()).toEqual([]);
    // Settling later does not free the slot a second time.
    await new Promise((r) => setTimeout(r, 50));
    expect(ended).toHaveBeenCalledTimes(1);
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
  });

  it("given a completion in flight, then the queue keeps the run's slot and lane until the board answers it, and is told once, with the run's own result", async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'hello' });
    const release = board.holdCompletions('r1');
    const ended = vi.fn(async (_ended: RunEnd) => {});
    const { claimAndHandOver } = await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh'), ended });

    await claimAndHandOver('r1');
    await vi.waitFor(() => expect(board.callsOf('r1', 'complete')).toHaveLength(1), { timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    expect(ended).not.toHaveBeenCalled();

    release();
    expect(await settled(store, 'r1')).toMatchObject({ reported: true });
    await vi.waitFor(() => expect(ended).toHaveBeenCalledTimes(1));
    // The queue records how the run ended (run.ended ok/reason, shown by audit): a run that succeeded
    // and was acknowledged ended well, whatever the settle's own reason says.
    expect(ended.mock.calls[0]![0]).toMatchObject({ type: 'run.settled', data: { runId: 'r1', result: { ok: true } } });
  });

  it("given a run that failed, when the board acknowledges its completion, then the queue is told it failed, with the run's error", async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'hello' });
    const ended = vi.fn(async (_ended: RunEnd) => {});
    const { claimAndHandOver } = await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh', '3'), ended });

    await claimAndHandOver('r1');
    expect(await settled(store, 'r1')).toMatchObject({ reported: true });
    const [complete] = board.callsOf('r1', 'complete');
    const error = complete?.call === 'complete' ? complete.result.error : undefined;
    expect(error).toEqual(expect.any(String));
    await vi.waitFor(() => expect(ended).toHaveBeenCalledTimes(1));
    expect(ended.mock.calls[0]![0]).toMatchObject({ type: 'run.settled', data: { runId: 'r1', result: { ok: false, error } } });
  });
});

async function waitForRetry(store: EventStore, runId: string, count: number): Promise<void> {
  await vi.waitFor(
    async () => {
      const retries = (await store.readStream(runStream(runId))).filter((e) => e.type === 'run.completion.retrying');
      if (retries.length < count) throw new Error(`${retries.length} of ${count} retries so far`);
    },
    { timeout: 5_000, interval: 20 },
  );
}
