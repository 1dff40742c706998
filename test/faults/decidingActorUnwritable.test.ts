import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { NewDomainEvent } from '../../events/catalog.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { DecidingActor } from '../../runtime/actors/decidingActor.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import { StaleVersionError } from '../../runtime/store/eventStore.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import type { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { type CounterState, counterDecider } from '../fixtures/counter/counterDecider.ts';
import { asInput, withCounters } from '../fixtures/counter/counterEvents.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { T0 } from '../support/events.ts';
import { tempDbPath } from '../support/tempStore.ts';

const STREAM = 'counter:a';
const bump = (i: number, limit: number): NewDomainEvent =>
  asInput({ stream: STREAM, type: 'counter.bump.requested', data: { by: 1, limit }, at: T0 + i });

/** A log whose disk is full until `free()`: the store's own fault seam, inside its commit. */
async function fullLog() {
  let full = true;
  const path = tempDbPath();
  const store = await openCounterStore(path, {
    faults: { failWrites: () => (full ? new Database.SqliteError('database or disk is full', 'SQLITE_FULL') : null) },
  });
  return { store, path, free: () => (full = false), fill: () => (full = true) };
}

async function counterActor(store: SqliteEventStore, clock: FakeClock) {
  const system = startActorSystem({ onError: () => undefined });
  onTestFinished(() => stopSystem(system));
  const actor = new DecidingActor<CounterState>(system, store, {
    name: 'counter-a',
    decider: counterDecider,
    clock,
    hydrate: async () => (await store.readStream(STREAM)).reduce((s, e) => counterDecider.evolve(s, e), counterDecider.initialState(STREAM)),
  });
  await actor.read(() => null);
  return actor;
}

/** Waits (bounded, on real turns of the event loop) until `count` retries are waiting on the fake clock. */
async function retriesWaiting(clock: FakeClock, count: number): Promise<void> {
  for (let turn = 0; turn < 2_000 && clock.pendingTimers() < count; turn++) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(clock.pendingTimers()).toBe(count);
}

describe('an input the log could not take', () => {
  it('is retried until it is recorded, decided again on the state the log holds, and recorded once', async () => {
    const log = await fullLog();
    const clock = new FakeClock();
    const actor = await counterActor(log.store, clock);
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);

    // A limit of 3: decided ahead on the state of the failed appends, the last two would be refused for
    // good; decided again on the log's state, three are bumped and two refused.
    const inputs = [1, 2, 3, 4, 5].map((i) => actor.input(bump(i, 3)));
    await retriesWaiting(clock, 5);
    expect(await log.store.headSeq()).toBe(0);
    log.free();
    clock.advance(100);
    const outcomes = await Promise.all(inputs);

    expect(outcomes.every((o) => o.ok)).toBe(true);
    const recorded = withCounters(await log.store.readStream(STREAM));
    expect(recorded.filter((e) => e.type === 'counter.bump.requested').map((e) => e.at - T0)).toEqual([1, 2, 3, 4, 5]);
    expect(recorded.filter((e) => e.type === 'counter.bumped').map((e) => e.data)).toEqual([{ total: 1 }, { total: 2 }, { total: 3 }]);
    expect(recorded.filter((e) => e.type === 'counter.bump.refused')).toHaveLength(2);
    expect(await actor.read((s) => s.total)).toBe(3);
    // Once when the outage began, naming the file and the cause; once when the log took writes again.
    expect(errors).toHaveBeenCalledTimes(2);
    expect(String(errors.mock.calls[0]![0])).toContain(`the log ${log.path} cannot be written: the disk is full`);
    expect(String(errors.mock.calls[1]![0])).toContain('can be written again');
  });

  it('waits longer each time, up to 5 s, on the clock it was given', async () => {
    const log = await fullLog();
    const clock = new FakeClock();
    const actor = await counterActor(log.store, clock);
    vi.spyOn(console, 'error').mockImplementation(() => undefined);

    const input = actor.input(bump(1, 10));
    const waits: number[] = [];
    for (let attempt = 0; attempt < 8; attempt++) {
      await retriesWaiting(clock, 1);
      const before = clock.now();
      let step = 0;
      while (clock.pendingTimers() === 1 && step < 10_000) {
        clock.advance(50);
        step++;
      }
      waits.push(clock.now() - before);
    }
    await retriesWaiting(clock, 1);
    log.free();
    clock.advance(5_000);
    await input;

    expect(waits).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    expect((await log.store.readStream(STREAM)).map((e) => e.type)).toEqual(['counter.bump.requested', 'counter.bumped']);
  });

  it('asked to fail fast (a request whose client retries) is refused at once with LogUnwritableError, and the actor goes on', async () => {
    const log = await fullLog();
    const clock = new FakeClock();
    const actor = await counterActor(log.store, clock);

    await expect(actor.input(bump(1, 10), { failFast: true })).rejects.toBeInstanceOf(LogUnwritableError);
    expect(clock.pendingTimers()).toBe(0);
    log.free();
    const next = await actor.input(bump(2, 10), { failFast: true });

    expect(next.ok && next.decisions.map((d) => d.data)).toEqual([{ total: 1 }]);
  });
  it('refused again and again because an earlier append of its chain broke (no other writer), is recorded once all the same', async () => {
    const log = await fullLog();
    log.free();
    // The refusal the store gives an append decided ahead of one that failed, five times over for one
    // input: what a log whose faults flap does to an actor that always has a failing append ahead.
    let refusals = 5;
    const flapping = Object.create(log.store) as SqliteEventStore;
    flapping.append = (request) => {
      const victim = request.events.some((e) => e.type === 'counter.bump.requested' && e.at === T0 + 2);
      if (!victim || refusals-- <= 0) return log.store.append(request);
      request.chain?.chain.breakAt(request.chain.link);
      return Promise.resolve({ ok: false, conflict: StaleVersionError.afterBrokenChain(request) });
    };
    const actor = await counterActor(flapping, new FakeClock());

    const outcomes = await Promise.all([1, 2, 3].map((i) => actor.input(bump(i, 10))));

    expect(outcomes.every((o) => o.ok)).toBe(true);
    const recorded = withCounters(await log.store.readStream(STREAM));
    expect(
      recorded
        .filter((e) => e.type === 'counter.bump.requested')
        .map((e) => e.at - T0)
        .sort(),
    ).toEqual([1, 2, 3]);
    expect(recorded.filter((e) => e.type === 'counter.bumped').map((e) => e.data)).toEqual([{ total: 1 }, { total: 2 }, { total: 3 }]);
  });
});
