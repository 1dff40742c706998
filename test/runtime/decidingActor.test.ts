import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import { InvalidEventError } from '../../events/codec.ts';
import { DecidingActor } from '../../runtime/actors/decidingActor.ts';
import { type ActorSystem, type CrashReport, startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import { type AppendRequest, type AppendResult, type EventStore, StaleVersionError } from '../../runtime/store/eventStore.ts';
import type { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { type CounterState, counterDecider } from '../fixtures/counter/counterDecider.ts';
import { asInput, withCounters } from '../fixtures/counter/counterEvents.ts';
import { nextTurn, openCountedStore, transactions } from '../support/countTransactions.ts';
import { bumped, oneTo, T0 } from '../support/events.ts';

const STREAM = 'counter:a';
/** High enough that no bump is refused: every input is decided the same way, whatever its turn. */
const LIMIT = 1_000_000;
const BROKEN_CHAIN = /an earlier append this one stood on was refused or failed/;

/** The i-th input of a test: its `at` is its mark, to find it again in the log whatever its seq. */
const bump = (i: number): NewDomainEvent => asInput({ stream: STREAM, type: 'counter.bump.requested', data: { by: 1, limit: LIMIT }, at: T0 + i });
const markOf = (event: { at: number }) => event.at - T0;

/**
 * Stops the clock the store ages a held batch by (`performance.now`): a held batch then never commits
 * for being 4 ms old, only when its holder lets it go (or it is full). A read or rehydration that waited
 * for a commit its own actor holds back would wait forever, not 4 ms: the test sees it, however fast or
 * slow the machine. Restored when the test ends, or earlier by `restore`.
 */
function frozenClock() {
  const now = Math.round(performance.now());
  const spy = vi.spyOn(performance, 'now').mockImplementation(() => now);
  const restore = () => spy.mockRestore();
  onTestFinished(restore);
  return { restore };
}

/** `promise`, or a failure naming `what` once `ms` have passed: a hang reported as such, not as the test's timeout. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The counter as a fold of the log: what the actor's state must equal once its appends are answered. */
function foldOf(events: readonly DomainEvent[]): CounterState {
  return events.reduce((state, event) => counterDecider.evolve(state, event), counterDecider.initialState(STREAM));
}

interface SeenAppend {
  readonly request: AppendRequest;
  result?: AppendResult;
}

/**
 * The real store behind a door the test opens: while `holding`, appends wait (a slow disk, a database
 * across a network), so a test can see what the actor hands over before any commit is known. `release`
 * hands every held append to the store in one turn (one group commit), `interleave` letting another
 * writer slip an append in before any of them; from then on appends pass straight through.
 */
function heldStore(store: SqliteEventStore) {
  const seen: SeenAppend[] = [];
  const held: { request: AppendRequest; settle: (result: Promise<AppendResult>) => void }[] = [];
  let holding = true;
  const forward = (request: AppendRequest, entry: SeenAppend) => {
    const result = store.append(request);
    void result.then(
      (r) => (entry.result = r),
      () => undefined,
    );
    return result;
  };
  const append = (request: AppendRequest): Promise<AppendResult> => {
    const entry: SeenAppend = { request };
    seen.push(entry);
    if (!holding) return forward(request, entry);
    return new Promise((resolve) => held.push({ request, settle: resolve }));
  };
  const view = new Proxy(store, {
    get(target, property) {
      if (property === 'append') return append;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as EventStore;
  return {
    store: view,
    seen,
    held,
    release(interleave: (request: AppendRequest) => void = () => {}) {
      holding = false;
      for (const { request, settle } of held.splice(0)) {
        interleave(request);
        settle(forward(request, seen.find((s) => s.request === request)!));
      }
    },
  };
}

/** The test counter as a DecidingActor on `store`, hydrated from the log; crashes are collected, not logged. */
async function counterActor(
  log: SqliteEventStore,
  store: EventStore = log,
  afterCommit?: (decisions: readonly DomainEvent[], input: DomainEvent) => void,
  decider: (system: ActorSystem) => typeof counterDecider = () => counterDecider,
) {
  const crashes: CrashReport[] = [];
  const system = startActorSystem({ onError: (report) => crashes.push(report) });
  onTestFinished(() => stopSystem(system));
  const actor = new DecidingActor<CounterState>(system, store, {
    name: 'counter-a',
    decider: decider(system),
    hydrate: async () => foldOf(await log.readStream(STREAM)),
    ...(afterCommit ? { afterCommit: (_state, decisions, input) => afterCommit(decisions, input) } : {}),
  });
  // Hydrated before the test starts counting appends and transactions.
  await actor.read(() => null);
  transactions.length = 0;
  return { actor, crashes, system };
}

const requestsOf = async (store: SqliteEventStore) => withCounters(await store.readStream(STREAM)).filter((e) => e.type === 'counter.bump.requested');

describe('DecidingActor: pipelined inputs', () => {
  it('given a slow store, when 100 inputs are sent at once, then all are handed over before any commit, commit in one transaction, are answered in order, and the state equals a fold of the log', async () => {
    const log = await openCountedStore();
    const door = heldStore(log);
    const { actor, crashes } = await counterActor(log, door.store);
    const answered: number[] = [];

    const inputs = Array.from({ length: 100 }, (_, i) =>
      actor.input(bump(i)).then((outcome) => {
        answered.push(i);
        return outcome;
      }),
    );
    // The actor decides each input without waiting for the last one's commit: all 100 reach the store.
    await vi.waitFor(() => expect(door.held).toHaveLength(100));
    expect(answered).toEqual([]);
    door.release();
    const outcomes = await Promise.all(inputs);

    expect(answered).toEqual(oneTo(100).map((n) => n - 1));
    const seqs = outcomes.map((o) => (o.ok && o.input ? o.input.seq : -1));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(outcomes.every((o, i) => o.ok && o.input && markOf(o.input) === i)).toBe(true);
    // Handed over in one turn, the 100 appends share one group commit.
    expect(transactions.map((t) => t.length)).toEqual([100]);
    const events = await log.readStream(STREAM);
    expect(events.map((e) => e.version)).toEqual(oneTo(events.length));
    expect(await actor.read((state) => ({ ...state }))).toEqual({ total: 100 });
    expect(await actor.read((state) => ({ ...state }))).toEqual(foldOf(events));
    expect(crashes).toEqual([]);
  });

  // Failed before the actor held the store's commits: nact runs each message in its own setImmediate,
  // queued after the group commit (also a setImmediate) the previous message's append scheduled, so
  // every input was committed alone: one transaction (one fsync) per input.
  it('given the real store, when 100 inputs are sent at once without awaiting each, then they land in far fewer transactions than inputs', async () => {
    const log = await openCountedStore();
    const { actor } = await counterActor(log);

    const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => actor.input(bump(i))));

    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect((await requestsOf(log)).map(markOf)).toEqual(oneTo(100).map((n) => n - 1));
    // A held batch still commits once 4 ms old: a slow machine may cut the burst into a few.
    expect(transactions.length).toBeLessThanOrEqual(10);
    const events = await log.readStream(STREAM);
    expect(events.map((e) => e.version)).toEqual(oneTo(events.length));
  });

  it('given the real store and a clock that does not age a held batch, when 100 inputs are sent at once, then they commit in one transaction, once the last is decided', async () => {
    frozenClock();
    const log = await openCountedStore();
    const { actor } = await counterActor(log);

    const outcomes = await within(5_000, 'the 100 inputs', Promise.all(Array.from({ length: 100 }, (_, i) => actor.input(bump(i)))));

    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(transactions.map((t) => t.length)).toEqual([100]);
    expect(await actor.read((state) => ({ ...state }))).toEqual({ total: 100 });
  });

  it('given the actor holds commits for inputs in its mailbox, when a read() is queued between them, then it answers promptly and sees the inputs before it committed, not those after', async () => {
    frozenClock();
    const log = await openCountedStore();
    const { actor, crashes } = await counterActor(log);
    const requestsInLog = () => withCounters(log.readAllNow(0, 1000)).filter((e) => e.type === 'counter.bump.requested').length;

    const before = Array.from({ length: 20 }, (_, i) => actor.input(bump(i)));
    const reading = actor.read((state) => ({ total: state.total, inLog: requestsInLog() }));
    const after = Array.from({ length: 20 }, (_, i) => actor.input(bump(20 + i)));

    // Had the read waited on the commit its own actor holds back, it would never answer (the clock is stopped).
    expect(await within(2_000, 'the read between inputs', reading)).toEqual({ total: 20, inLog: 20 });
    const outcomes = await within(5_000, 'the inputs', Promise.all([...before, ...after]));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect((await requestsOf(log)).map(markOf)).toEqual(oneTo(40).map((n) => n - 1));
    // The inputs before the read shared a commit, and those after it another.
    expect(transactions.map((t) => t.length)).toEqual([20, 20]);
    expect(crashes).toEqual([]);
  });

  it('given the actor holds commits for inputs in its mailbox, when a rehydrate() is queued between them, then it answers promptly and the state folds every input', async () => {
    frozenClock();
    const log = await openCountedStore();
    const { actor, crashes } = await counterActor(log);

    const before = Array.from({ length: 20 }, (_, i) => actor.input(bump(i)));
    const rehydrating = actor.rehydrate();
    const after = Array.from({ length: 20 }, (_, i) => actor.input(bump(20 + i)));

    await within(2_000, 'the rehydration between inputs', rehydrating);
    const outcomes = await within(5_000, 'the inputs', Promise.all([...before, ...after]));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(await actor.read((state) => ({ ...state }))).toEqual({ total: 40 });
    expect(await actor.read((state) => ({ ...state }))).toEqual(foldOf(await log.readStream(STREAM)));
    expect(crashes).toEqual([]);
  });

  it('given the actor holds commits for inputs in its mailbox, when one input fails validation and breaks the chain, then the inputs before it commit, those after it are decided again from the log, and none waits on a held commit', async () => {
    frozenClock();
    const log = await openCountedStore();
    const { actor, crashes } = await counterActor(log);
    // An input of the counter whose data its schema refuses (a bump by 0): decided, then refused by
    // the store at append(), breaking the actor's chain at once.
    const invalid = { stream: STREAM, type: 'counter.bump.requested', data: { by: 0, limit: 1000 }, at: T0 + 999 } as unknown as NewDomainEvent;

    const before = Array.from({ length: 10 }, (_, i) => actor.input(bump(i)));
    const refused = actor.input(invalid).then(
      () => null,
      (error: unknown) => error,
    );
    const after = Array.from({ length: 10 }, (_, i) => actor.input(bump(10 + i)));

    const outcomes = await within(5_000, 'the inputs around the invalid one', Promise.all([...before, ...after]));
    expect(await refused).toBeInstanceOf(InvalidEventError);
    expect(outcomes.every((o) => o.ok && o.input)).toBe(true);
    expect((await requestsOf(log)).map(markOf)).toEqual(oneTo(20).map((n) => n - 1));
    expect(await actor.read((state) => ({ ...state }))).toEqual({ total: 20 });
    const events = await log.readStream(STREAM);
    expect(events.map((e) => e.version)).toEqual(oneTo(events.length));
    expect(crashes).toEqual([]);
  });

  /**
   * 20 inputs sent at once, the clock stopped; `stopActor` is called once a few are decided, the rest
   * still in the mailbox: the actor then holds the store's commits. Resolves with whether an append of
   * another writer made after it commits (within 2 s); the clock runs again before it returns.
   */
  async function stoppedWhileHolding(stopActor: (actor: DecidingActor<CounterState>, system: ActorSystem) => void) {
    const clock = frozenClock();
    const log = await openCountedStore();
    let decided = 0;
    const { actor, system } = await counterActor(log, log, undefined, () => ({
      ...counterDecider,
      decide: (state, input) => {
        decided++;
        return counterDecider.decide(state, input);
      },
    }));
    // Once the actor is stopped, those still in its mailbox may never be answered: they fail on their query's timeout.
    for (let i = 0; i < 20; i++) actor.input(bump(i)).catch(() => null);
    while (decided < 3) await nextTurn();
    expect(decided).toBeLessThan(20);
    expect(transactions).toEqual([]);

    stopActor(actor, system);
    const probe = log.append({ expected: { 'counter:z': 0 }, events: [bumped('counter:z', 1)] });
    try {
      return await within(2_000, 'an append of another writer after the actor stopped', probe).then(
        () => true,
        () => false,
      );
    } finally {
      clock.restore();
      await probe;
    }
  }

  it('given the actor holds commits for inputs in its mailbox, when it is stopped, then it lets the store commit again', async () => {
    expect(await stoppedWhileHolding((actor) => actor.stop())).toBe(true);
  });

  // What the daemon's close() does before store.close(): a hold left over would make every later batch
  // wait out the 4 ms limit, and store.close() reject the appends pending under it. (nact takes the
  // messages already in the mailbox after its system stops: the actor decides them and lets go.)
  it('given the actor holds commits for inputs in its mailbox, when its actor system is stopped, then it lets the store commit again', async () => {
    expect(await stoppedWhileHolding((_actor, system) => stopSystem(system))).toBe(true);
  });

  it('given inputs in flight, when read() is asked, then it answers only once they are committed, and the log holds them when it does', async () => {
    const log = await openCountedStore();
    const door = heldStore(log);
    const { actor } = await counterActor(log, door.store);
    const timeline: string[] = [];
    const inputs = Array.from({ length: 20 }, (_, i) => actor.input(bump(i)).then(() => timeline.push(`answer ${i}`)));

    const reading = actor
      .read((state) => ({
        total: state.total,
        inLog: withCounters(log.readAllNow(0, 1000)).filter((e) => e.type === 'counter.bump.requested').length,
      }))
      .then((seen) => {
        timeline.push('read');
        return seen;
      });
    await vi.waitFor(() => expect(door.held).toHaveLength(20));
    // The read was taken after the 20 inputs, yet none is committed: it must wait, not answer ahead of the log.
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(timeline).toEqual([]);
    door.release();

    expect(await reading).toEqual({ total: 20, inLog: 20 });
    await Promise.all(inputs);
    expect(timeline.at(-1)).toBe('read');
  });
});

describe('DecidingActor: another writer between pipelined inputs', () => {
  /**
   * Ten inputs handed over before any commits; another writer appends to the actor's stream between
   * the 5th and the 6th in the same group commit, so the 6th is stale and the 7th..10th stood on it.
   */
  async function conflictScenario() {
    const log = await openCountedStore();
    const door = heldStore(log);
    const committed: { mark: number; seq: number; decisions: number[] }[] = [];
    const { actor, crashes } = await counterActor(log, door.store, (decisions, input) =>
      committed.push({ mark: markOf(input), seq: input.seq, decisions: decisions.map((d) => d.seq) }),
    );
    const inputs = Array.from({ length: 10 }, (_, i) => actor.input(bump(i)));
    await vi.waitFor(() => expect(door.held).toHaveLength(10));

    let other: Promise<AppendResult> | undefined;
    door.release((request) => {
      if (markOf(request.events[0]!) === 5) other = log.append({ expected: { [STREAM]: 'any' }, events: [bumped(STREAM, 1000)] });
    });
    const outcomes = await Promise.all(inputs);
    expect(await other).toMatchObject({ ok: true });
    return { log, door, actor, crashes, outcomes, committed };
  }

  it('given another writer appends to the stream between two pipelined inputs, when they commit, then the conflicting input and those after it are retried after rehydration, none lost or written twice', async () => {
    const { log, door, actor, crashes, outcomes } = await conflictScenario();

    expect(outcomes.every((o) => o.ok && o.input)).toBe(true);
    // Each input in the log once, the other writer's event where it committed: between the 5th and the 6th.
    const events = await log.readStream(STREAM);
    const counters = withCounters(events);
    expect(counters.filter((e) => e.type === 'counter.bump.requested').map(markOf)).toEqual(oneTo(10).map((n) => n - 1));
    const othersAt = counters.findIndex((e) => e.type === 'counter.bumped' && e.data.total === 1000);
    expect(
      counters
        .slice(0, othersAt)
        .filter((e) => e.type === 'counter.bump.requested')
        .map(markOf),
    ).toEqual([0, 1, 2, 3, 4]);
    expect(events.map((e) => e.version)).toEqual(oneTo(events.length));
    // The 6th was refused as stale, the 7th..10th as standing on it: each handed over twice, written once.
    const attempts = (mark: number) => door.seen.filter((s) => markOf(s.request.events[0]!) === mark);
    for (const mark of [0, 1, 2, 3, 4]) expect(attempts(mark).map((s) => s.result?.ok)).toEqual([true]);
    for (const mark of [5, 6, 7, 8, 9]) expect(attempts(mark).map((s) => s.result?.ok)).toEqual([false, true]);
    const refusals = door.seen.flatMap((s) => (s.result && !s.result.ok ? [s.result.conflict] : []));
    expect(refusals.every((c) => c instanceof StaleVersionError)).toBe(true);
    expect(refusals[0]!.message).not.toMatch(BROKEN_CHAIN);
    expect(refusals.slice(1).map((c) => c.message)).toEqual(Array(4).fill(expect.stringMatching(BROKEN_CHAIN)));
    // Rehydrated from the log: the other writer's total carried on, not the actor's pre-conflict fold.
    expect(await actor.read((state) => ({ ...state }))).toEqual({ total: 1005 });
    expect(await actor.read((state) => ({ ...state }))).toEqual(foldOf(events));
    expect(crashes).toEqual([]);
  });

  it('given a conflict among pipelined inputs, then afterCommit is called once per committed input, in commit order, never for a refused append', async () => {
    const { log, door, committed } = await conflictScenario();

    const requests = await requestsOf(log);
    // 15 appends were handed over (5 refused), 10 committed: one call each, in seq order.
    expect(door.seen).toHaveLength(15);
    expect(committed.map((c) => c.seq)).toEqual(requests.map((e) => e.seq));
    expect(committed.map((c) => c.mark)).toEqual(oneTo(10).map((n) => n - 1));
    // Each call carries the decisions committed with its input, as the log records them.
    const all = await log.readStream(STREAM);
    for (const { seq, decisions } of committed) expect(decisions).toEqual(all.filter((e) => e.cause === seq).map((e) => e.seq));
  });
});
