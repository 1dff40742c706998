import { describe, expect, it, onTestFinished } from 'vitest';
import { runDecider } from '../../actors/run/runDecider.ts';
import type { RunExecution } from '../../actors/run/runState.ts';
import type { SessionInput } from '../../actors/session/decideSession.ts';
import { requestAdoption } from '../../apps/board/chores/adoptions/adoptionRequests.ts';
import { SessionActors } from '../../apps/computer/closer/sessionActors.ts';
import { sessionStream } from '../../apps/computer/closer/sessionStreams.ts';
import { RunActors } from '../../apps/computer/runActor.ts';
import type { NewDomainEvent } from '../../events/catalog.ts';
import type { NewEvent } from '../../events/envelope.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { DecidingActor } from '../../runtime/actors/decidingActor.ts';
import { CONFLICT_RETRIES, retryOnConflict } from '../../runtime/actors/retryOnConflict.ts';
import { type CrashReport, startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import { type AppendRequest, type EventStore, StaleVersionError } from '../../runtime/store/eventStore.ts';
import type { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { T0 } from '../support/events.ts';
import { openTempStore } from '../support/tempStore.ts';

/**
 * The real store with a rival writer that always wins: before each append it commits `rival` to the
 * append's first stream, so every attempt, however freshly rehydrated, is refused as stale.
 */
function racedStore(log: SqliteEventStore, rival: (stream: string) => NewEvent, wins = Number.POSITIVE_INFINITY) {
  const attempts: AppendRequest[] = [];
  let won = 0;
  const append = async (request: AppendRequest) => {
    attempts.push(request);
    const stream = request.events[0]!.stream;
    if (won++ < wins) expect(await log.append({ expected: { [stream]: 'any' }, events: [rival(stream)] })).toMatchObject({ ok: true });
    return log.append(request);
  };
  const store = new Proxy(log, {
    get(target, property) {
      if (property === 'append') return append;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as EventStore;
  return { store, attempts };
}

function actorSystem() {
  const crashes: CrashReport[] = [];
  const system = startActorSystem({ onError: (report) => crashes.push(report) });
  onTestFinished(() => stopSystem(system));
  return { system, crashes };
}

const RUN = 'c1/run:r1';
const handedOver: NewDomainEvent = {
  stream: RUN,
  type: 'run.handed.over',
  data: { runId: 'r1', lane: 'L', budgetS: 0, laneSession: null, local: true },
  at: T0,
};
const heartbeat = (stream: string): NewEvent => ({
  stream,
  type: 'run.heartbeat.answered',
  data: { runId: 'r1', status: 200, cancelRequested: false },
  at: T0,
});

describe('one retry policy for a stale version, in every actor', () => {
  it('given attempts refused as stale, then retryOnConflict decides again up to CONFLICT_RETRIES times, then throws the last conflict', async () => {
    const stale = () => new StaleVersionError('s:a', 1, 2);
    let calls = 0;
    expect(await retryOnConflict(async () => (++calls <= CONFLICT_RETRIES ? stale() : 'decided'))).toBe('decided');
    expect(calls).toBe(CONFLICT_RETRIES + 1);

    calls = 0;
    const last = stale();
    await expect(retryOnConflict(async () => (++calls <= CONFLICT_RETRIES ? stale() : last))).rejects.toBe(last);
    expect(calls).toBe(CONFLICT_RETRIES + 1);
  });

  it('given refusals only because an earlier append of the chain broke, then they are retried without counting: no other writer is involved', async () => {
    const broken = () => StaleVersionError.afterBrokenChain({ expected: { 's:a': 3 }, events: [] });
    let calls = 0;
    const outcome = await retryOnConflict(async () => (++calls <= CONFLICT_RETRIES * 2 ? broken() : 'decided'));
    expect(outcome).toBe('decided');
    expect(calls).toBe(CONFLICT_RETRIES * 2 + 1);
  });

  it('given a rival that always writes first, then the deciding actor (board, queue) asked to fail fast tries CONFLICT_RETRIES + 1 times, each on the rehydrated state, and refuses with the conflict', async () => {
    const log = await openTempStore();
    const { store, attempts } = racedStore(log, heartbeat);
    const { system, crashes } = actorSystem();
    const actor = new DecidingActor<RunExecution>(system, store, {
      name: 'raced',
      decider: runDecider,
      hydrate: async () => (await log.readStream(RUN)).reduce((state, event) => runDecider.evolve(state, event), runDecider.initialState(RUN)),
    });

    await expect(actor.input(handedOver, { failFast: true })).rejects.toBeInstanceOf(StaleVersionError);
    expect(attempts).toHaveLength(CONFLICT_RETRIES + 1);
    // Each attempt expected the version the log had after the rival's write before it: it was rehydrated.
    expect(attempts.map((a) => a.expected[RUN])).toEqual(Array.from({ length: CONFLICT_RETRIES + 1 }, (_, i) => i));
    expect(crashes).toEqual([]);
  });

  it('given a rival that always writes first, then the run actor asked to fail fast tries CONFLICT_RETRIES + 1 times, each on the rehydrated state, and refuses with the conflict', async () => {
    const log = await openTempStore();
    const { store, attempts } = racedStore(log, heartbeat);
    const { system, crashes } = actorSystem();
    const runs = new RunActors(system, store, 'c1', () => {});

    await expect(runs.input('r1', handedOver, { failFast: true })).rejects.toBeInstanceOf(StaleVersionError);
    expect(attempts).toHaveLength(CONFLICT_RETRIES + 1);
    expect(attempts.map((a) => a.expected[RUN])).toEqual(Array.from({ length: CONFLICT_RETRIES + 1 }, (_, i) => i));
    // A conflict is no crash: the actor folds its run again from the log, quietly.
    expect(crashes).toEqual([]);
    runs.stop('r1');
  });

  it('given a rival that always writes first, then a session actor tries CONFLICT_RETRIES + 1 times, each on what it read on, and refuses with the conflict', async () => {
    const log = await openTempStore();
    const stream = sessionStream('c1', 's1');
    const { store, attempts } = racedStore(log, () => ({
      stream,
      type: 'session.kill.answered',
      data: { sessionId: 's1', attempt: 1, ok: false, detail: 'rival' },
      at: T0,
    }));
    const { system } = actorSystem();
    const actors = new SessionActors(system, store, 'c1', () => T0);
    onTestFinished(() => actors.stop());

    const ended = (): SessionInput => ({
      stream,
      type: 'session.run.ended',
      data: { sessionId: 's1', runId: 'r1', lane: 'L', bound: false, launchedAt: null, pid: null },
      at: T0,
    });
    await expect(actors.step('s1', ended)).rejects.toBeInstanceOf(StaleVersionError);
    expect(attempts).toHaveLength(CONFLICT_RETRIES + 1);
    expect(attempts.map((a) => a.expected[stream])).toEqual(Array.from({ length: CONFLICT_RETRIES + 1 }, (_, i) => i));
  });

  it('given a rival that always writes first, then a one-shot command (`runledger adopt`) tries CONFLICT_RETRIES + 1 times, each on the lane read again, and says the lane kept changing', async () => {
    const log = await openTempStore();
    const { store, attempts } = racedStore(log, (stream) => ({
      stream,
      type: 'adoption.requested',
      data: { lane: 'L', sessionId: 'rival' },
      at: T0,
    }));

    await expect(requestAdoption(store, new FakeClock(T0), 'L', 's1')).rejects.toThrow('lane L kept changing; try again');
    expect(attempts).toHaveLength(CONFLICT_RETRIES + 1);
    expect(attempts.map((a) => a.expected['lane:L'])).toEqual(Array.from({ length: CONFLICT_RETRIES + 1 }, (_, i) => i));
  });
});

/** Waits (bounded, on real turns of the event loop) until a retry waits on the fake clock, or `settled` says it is over. */
async function retryWaiting(clock: FakeClock, settled: () => boolean): Promise<void> {
  for (let turn = 0; turn < 2_000 && clock.pendingTimers() === 0 && !settled(); turn++) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(clock.pendingTimers() > 0 || settled()).toBe(true);
}

/**
 * Drives `input` to its end on `clock`: each wait between rounds of conflicts is measured (the clock
 * moves 10 ms at a time while one waits), so the test reads the backoff the input got.
 */
async function waitsUntilSettled<T>(clock: FakeClock, input: Promise<T>): Promise<{ outcome: T; waits: number[] }> {
  let settled = false;
  const done = input.finally(() => (settled = true));
  const waits: number[] = [];
  for (let round = 0; round < 50; round++) {
    await retryWaiting(clock, () => settled);
    if (settled) break;
    const before = clock.now();
    for (let step = 0; clock.pendingTimers() > 0 && step < 1_000; step++) clock.advance(10);
    waits.push(clock.now() - before);
  }
  return { outcome: await done, waits };
}

describe('an input from the world (a connection, a timer, a lapse, an exit) whose conflicts outlast the retries', () => {
  const rounds = 3;

  it('given rivals that win 3 × (CONFLICT_RETRIES + 1) times, then the deciding actor waits a jittered, growing time on its clock between rounds and records it once', async () => {
    const log = await openTempStore();
    const { store, attempts } = racedStore(log, heartbeat, rounds * (CONFLICT_RETRIES + 1));
    const { system, crashes } = actorSystem();
    const clock = new FakeClock(T0);
    const draws = [0.5, 0.99, 0.25];
    const actor = new DecidingActor<RunExecution>(system, store, {
      name: 'raced',
      decider: runDecider,
      clock,
      random: () => draws.shift() ?? 0,
      hydrate: async () => (await log.readStream(RUN)).reduce((state, event) => runDecider.evolve(state, event), runDecider.initialState(RUN)),
    });

    const { outcome, waits } = await waitsUntilSettled(clock, actor.input(handedOver));

    expect(outcome.ok).toBe(true);
    expect(attempts).toHaveLength(rounds * (CONFLICT_RETRIES + 1) + 1);
    // Full jitter below 100 ms, 200 ms, 400 ms (the draws 0.5, 0.99, 0.25), measured to the clock's 10 ms steps.
    expect(waits).toEqual([50, 200, 100]);
    const handed = (await log.readStream(RUN)).filter((e) => e.type === 'run.handed.over');
    expect(handed).toHaveLength(1);
    expect(crashes).toEqual([]);
  });

  it('given rivals that win 3 × (CONFLICT_RETRIES + 1) times, then the run actor records it once after waiting on its clock', async () => {
    const log = await openTempStore();
    const { store, attempts } = racedStore(log, heartbeat, rounds * (CONFLICT_RETRIES + 1));
    const { system, crashes } = actorSystem();
    const clock = new FakeClock(T0);
    const runs = new RunActors(system, store, 'c1', () => {}, clock);

    const { outcome, waits } = await waitsUntilSettled(clock, runs.input('r1', handedOver));

    expect(outcome.ok).toBe(true);
    expect(attempts).toHaveLength(rounds * (CONFLICT_RETRIES + 1) + 1);
    expect(waits).toHaveLength(rounds);
    expect((await log.readStream(RUN)).filter((e) => e.type === 'run.handed.over')).toHaveLength(1);
    expect(crashes).toEqual([]);
    runs.stop('r1');
  });
});
