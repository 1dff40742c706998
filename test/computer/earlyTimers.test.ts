/**
 * Every wait the computer arms ends in the decision it waits for, however early the runtime fires it
 * (docs/rules.md#computer-behaviour, "Timers"): Node's timers can fire while Date.now() is a millisecond short.
 */
import { describe, expect, it, vi } from 'vitest';
import { plainReader } from '../../adapters/agent/outputReaders.ts';
import type { BoardClaims } from '../../apps/computer/claimConsumer.ts';
import { ComputerQueue } from '../../apps/computer/computerQueue.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { type Clock, FakeClock, MAX_TIMER_MS, processClock, systemClock, wakeAt } from '../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { agentCommand, bounded, start } from '../run/execution/agents.ts';
import { fixtureAgent, runStream, startRuns, waitForEvent } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore } from '../support/tempStore.ts';

const granted = (runId: string) => ({
  status: 200,
  body: { run: { run_id: runId, lane: 'A', prompt: 'hi', agent_id: null, timeout_s: null }, run_token: 'secret', skills: [] },
});

/** Each run's claim answers, in order; then 200. */
class ScriptedBoard implements BoardClaims {
  readonly calls: string[] = [];
  constructor(private readonly script: Record<string, { status: number; body?: unknown }[]>) {}
  async claim(runId: string) {
    this.calls.push(runId);
    return this.script[runId]?.shift() ?? granted(runId);
  }
}

async function queueOn(store: EventStore, clock: Clock, board: BoardClaims) {
  const system = startActorSystem({ onError: () => {} });
  const queue = new ComputerQueue(system, store, clock, 'c1', board);
  await queue.start();
  return {
    queue,
    stop: () => {
      queue.stop();
      return stopSystem(system);
    },
  };
}

const frame = (clock: Clock, runId: string) => ({
  stream: 'c1/lane:A',
  type: 'frame.received' as const,
  data: { frameId: `f-${runId}`, kind: 'run.requested', runId, lane: 'A' },
  at: clock.now(),
});

describe('one mechanism for a wait: wakeAt', () => {
  it('a wake-up before its time re-arms for the rest, and the wait ends exactly once, at its time', () => {
    const clock = new FakeClock(0, { firesEarlyMs: 1 });
    const fired: number[] = [];
    wakeAt(clock, 5_000, () => fired.push(clock.now()));
    clock.advance(4_999);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual([5_000]);
    clock.advance(60_000);
    expect(fired).toEqual([5_000]);
  });

  it('a wait longer than a Node timer can hold (2^31-1 ms) is chained, never cut short', () => {
    const asked: number[] = [];
    const fake = new FakeClock(0);
    const recording: Clock = {
      now: () => fake.now(),
      after: (ms, fn) => {
        asked.push(ms);
        return fake.after(ms, fn);
      },
    };
    const thirtyDays = 30 * 86_400_000;
    let fired = 0;
    wakeAt(recording, thirtyDays, () => fired++);
    fake.advance(thirtyDays - 1);
    expect(fired).toBe(0);
    fake.advance(1);
    expect(fired).toBe(1);
    expect(Math.max(...asked)).toBeLessThanOrEqual(MAX_TIMER_MS);
  });

  it("on a process's clock, a timer that fires while its time line is short re-arms and fires once its time has come", async () => {
    let lag = 0;
    const clock = processClock(Date.now, () => performance.now() - lag);
    const due = clock.now() + 30;
    const fired = new Promise<number>((resolve) => wakeAt(clock, due, () => resolve(clock.now())));
    // From now on the time line reads 15 ms behind what the timer measured.
    lag = 15;
    const at = await bounded(fired, 2_000, 'the wait never ended');
    expect(at).toBeGreaterThanOrEqual(due);
  });
});

describe("the queue's waits, with timers that fire a millisecond early", () => {
  it('a parked run is claimed again once its wait is over', async () => {
    const store = await openTempStore();
    const clock = new FakeClock(Date.UTC(2026, 0, 1), { firesEarlyMs: 1 });
    const board = new ScriptedBoard({ r1: [{ status: 409, body: { detail: { error: 'conversation_busy' } } }] });
    const { queue, stop } = await queueOn(store, clock, board);
    await queue.input(frame(clock, 'r1'));
    await vi.waitFor(async () => expect((await queue.state()).runs.r1?.busyWaits).toBe(1), { timeout: 5_000 });
    clock.advance(30_000);
    await vi.waitFor(async () => expect((await queue.state()).runs.r1?.status).toBe('running'), { timeout: 5_000 });
    expect(board.calls).toEqual(['r1', 'r1']);
    stop();
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
  });

  it('a claim that failed with 503 is tried again once its retry is due', async () => {
    const store = await openTempStore();
    const clock = new FakeClock(Date.UTC(2026, 0, 1), { firesEarlyMs: 1 });
    const board = new ScriptedBoard({ r1: [{ status: 503 }, { status: 503 }] });
    const { queue, stop } = await queueOn(store, clock, board);
    await queue.input(frame(clock, 'r1'));
    for (const [wait, calls] of [
      [2_000, 2],
      [4_000, 3],
    ] as const) {
      await vi.waitFor(() => expect(board.calls.length).toBe(calls - 1), { timeout: 5_000 });
      await vi.waitFor(async () => expect((await queue.state()).runs.r1?.status).toBe('waiting'), { timeout: 5_000 });
      clock.advance(wait);
      await vi.waitFor(() => expect(board.calls.length).toBe(calls), { timeout: 5_000 });
    }
    await vi.waitFor(async () => expect((await queue.state()).runs.r1?.status).toBe('running'), { timeout: 5_000 });
    stop();
  });

  it('a restart re-arms every pending wait: a run parked by the last process is claimed when its wait is over', async () => {
    const store = await openTempStore();
    const clock = new FakeClock(Date.UTC(2026, 0, 1), { firesEarlyMs: 1 });
    const board = new ScriptedBoard({ r1: [{ status: 409, body: { detail: { error: 'conversation_busy' } } }] });
    const first = await queueOn(store, clock, board);
    await first.queue.input(frame(clock, 'r1'));
    await vi.waitFor(async () => expect((await first.queue.state()).runs.r1?.busyWaits).toBe(1), { timeout: 5_000 });
    first.stop();

    const second = await queueOn(store, clock, board);
    clock.advance(30_000);
    await vi.waitFor(async () => expect((await second.queue.state()).runs.r1?.status).toBe('running'), { timeout: 5_000 });
    second.stop();
  });
});

describe("a login's usage limit, with timers that fire a millisecond early", () => {
  async function limitedQueue(store: EventStore, clock: Clock, resumed: string[]) {
    const system = startActorSystem({ onError: () => {} });
    const queue = new ComputerQueue(system, store, clock, 'c1', new ScriptedBoard({}), { limitOver: (runId) => resumed.push(runId) });
    await queue.start();
    return {
      queue,
      stop: () => {
        queue.stop();
        return stopSystem(system);
      },
    };
  }
  const configured = (clock: Clock) => ({
    stream: 'c1/computer:c1',
    type: 'computer.configured' as const,
    data: { slots: 2, loginCapacity: {} },
    at: clock.now(),
  });
  const reported = (clock: Clock, runId: string, resetAt: number) => ({
    stream: 'c1/lane:A',
    type: 'run.limit.reported' as const,
    data: { runId, words: "You've hit your usage limit.", resetAt },
    at: clock.now(),
  });
  const frameIn = (clock: Clock, runId: string, lane: string) => ({
    ...frame(clock, runId),
    stream: `c1/lane:${lane}`,
    data: { ...frame(clock, runId).data, lane },
  });

  it('the waiting run runs again at the reset, not before, and the login’s other run is claimed then; a restart keeps the wait', async () => {
    const store = await openTempStore();
    const clock = new FakeClock(Date.UTC(2026, 0, 1), { firesEarlyMs: 1 });
    const resumed: string[] = [];
    const first = await limitedQueue(store, clock, resumed);
    await first.queue.input(configured(clock));
    await first.queue.input(frameIn(clock, 'r1', 'A'));
    await vi.waitFor(async () => expect((await first.queue.state()).runs.r1?.status).toBe('running'), { timeout: 5_000 });
    const reset = clock.now() + 60_000;
    await first.queue.input(reported(clock, 'r1', reset));
    await first.queue.input(frameIn(clock, 'r2', 'B'));
    expect((await first.queue.state()).runs.r2?.status).toBe('waiting');
    first.stop();

    const second = await limitedQueue(store, clock, resumed);
    clock.advance(59_999);
    await new Promise((r) => setTimeout(r, 50));
    expect(resumed).toEqual([]);
    clock.advance(1);
    await vi.waitFor(() => expect(resumed).toEqual(['r1']), { timeout: 5_000 });
    await vi.waitFor(async () => expect((await second.queue.state()).runs.r2?.status).toBe('running'), { timeout: 5_000 });
    second.stop();
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
  });
});

describe('a completion retry, with timers that fire a millisecond early', () => {
  it('a completion that failed is sent again once its retry is due', async () => {
    const store = await openTempStore();
    const clock = new FakeClock(Date.UTC(2026, 0, 1), { firesEarlyMs: 1 });
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'hello' });
    board.failCompletions('r1', 503, 503);
    const { claimAndHandOver } = await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh'), heartbeatMs: 60_000 });
    await claimAndHandOver('r1');
    for (const [wait, sent] of [
      [1_000, 2],
      [3_000, 3],
    ] as const) {
      await vi.waitFor(
        async () => {
          const retries = (await store.readStream(runStream('r1'))).filter((e) => e.type === 'run.completion.retrying');
          expect(retries.length).toBe(sent - 1);
        },
        { timeout: 10_000 },
      );
      clock.advance(wait);
      await vi.waitFor(() => expect(board.callsOf('r1', 'complete').length).toBe(sent), { timeout: 5_000 });
    }
    expect((await waitForEvent(store, 'r1', 'run.settled')).data).toMatchObject({ reported: true });
  });
});

/**
 * The fake clock as the wall clock of a machine whose time is stepped back (NTP) by `stepMs` the first
 * time it is read at or after `at`: between a wait's check that its time has come and the input it records.
 */
function steppedBackAt(fake: FakeClock, at: number, stepMs: number): Clock {
  let back = 0;
  return {
    now() {
      const now = fake.now() - back;
      if (back === 0 && now >= at) back = stepMs;
      return now;
    },
    after: (ms, fn) => fake.after(ms, fn),
  };
}

describe('a wait whose time has come, when the wall clock is then stepped back', () => {
  it('a claim retry that fell due is decided at its due time, and the claim is tried again', async () => {
    const store = await openTempStore();
    const fake = new FakeClock(Date.UTC(2026, 0, 1));
    const clock = steppedBackAt(fake, fake.now() + 2_000, 1_000);
    const board = new ScriptedBoard({ r1: [{ status: 503 }] });
    const { queue, stop } = await queueOn(store, clock, board);
    await queue.input(frame(clock, 'r1'));
    await vi.waitFor(async () => expect((await queue.state()).runs.r1?.claimAttempts).toBe(1), { timeout: 5_000 });
    fake.advance(2_000);
    await vi.waitFor(async () => expect((await queue.state()).runs.r1?.status).toBe('running'), { timeout: 5_000 });
    expect(board.calls).toEqual(['r1', 'r1']);
    stop();
  });

  it('a completion retry that fell due is decided at its due time, and the completion is sent again', async () => {
    const store = await openTempStore();
    const fake = new FakeClock(Date.UTC(2026, 0, 1));
    const clock = steppedBackAt(fake, fake.now() + 1_000, 1_000);
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'hello' });
    board.failCompletions('r1', 503);
    const { claimAndHandOver } = await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh'), heartbeatMs: 60_000 });
    await claimAndHandOver('r1');
    await vi.waitFor(
      async () => {
        expect((await store.readStream(runStream('r1'))).some((e) => e.type === 'run.completion.retrying')).toBe(true);
      },
      { timeout: 10_000 },
    );
    fake.advance(1_000);
    await vi.waitFor(() => expect(board.callsOf('r1', 'complete').length).toBe(2), { timeout: 5_000 });
    expect((await waitForEvent(store, 'r1', 'run.settled')).data).toMatchObject({ reported: true });
  });
});

describe("an agent's budget", () => {
  it('a budget of 30 days (longer than a Node timer holds) does not end the turn at once', async () => {
    const agent = await start({
      command: agentCommand('echo.sh'),
      prompt: 'hi',
      reader: plainReader(),
      clock: systemClock,
      deadlineAt: Date.now() + 30 * 86_400_000,
    });
    const result = await bounded(agent.result, 10_000, 'the agent did not finish');
    expect(result.outcome).toBe('exited');
  });
});
