import { describe, expect, it, onTestFinished } from 'vitest';
import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import { DecidingActor } from '../../runtime/actors/decidingActor.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import { foldLog } from '../../runtime/folds/foldLog.ts';
import { appendOrThrow, type EventStore } from '../../runtime/store/eventStore.ts';
import { openSqliteStore, SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { type CounterState, counterDecider } from '../fixtures/counter/counterDecider.ts';
import { asInput, counterCodec, withCounters } from '../fixtures/counter/counterEvents.ts';
import { T0 } from '../support/events.ts';
import { postgresKind, storeKinds } from '../support/storeKinds.ts';

const STREAM = 'counter:a';
const bump = (i: number): NewDomainEvent => asInput({ stream: STREAM, type: 'counter.bump.requested', data: { by: 1, limit: 100 }, at: T0 + i });
const foldOf = (events: readonly DomainEvent[]): CounterState =>
  events.reduce((state, event) => counterDecider.evolve(state, event), counterDecider.initialState(STREAM));

/** The counter as a DecidingActor of a process of its own: its own store on the log, hydrated now, told of nobody else's appends. */
async function counterActor(store: EventStore, name: string) {
  const system = startActorSystem({ onError: () => undefined });
  onTestFinished(() => stopSystem(system));
  const actor = new DecidingActor<CounterState>(system, store, {
    name,
    decider: counterDecider,
    hydrate: async () => foldOf(await store.readStream(STREAM)),
  });
  await actor.read(() => null);
  return actor;
}

describe.each(storeKinds)('a decision on stale state never commits, on $name', (kind) => {
  it('given two writers of one stream (two boards on one log), when one decides after the other appended unseen, then it folds the log again and decides on it: no decision taken on the older state is recorded', async () => {
    const where = await kind.fresh();
    const [first, second] = [await kind.open(where, { pollMs: 600_000 }), await kind.open(where, { pollMs: 600_000 })];
    const a = await counterActor(first!, 'counter-a-1');
    const b = await counterActor(second!, 'counter-a-2');

    await b.input(bump(1));
    const outcome = await a.input(bump(2));

    expect(outcome).toMatchObject({ ok: true, decisions: [{ type: 'counter.bumped', data: { total: 2 } }] });
    const totals = withCounters(await first!.readStream(STREAM)).flatMap((e) => (e.type === 'counter.bumped' ? [e.data.total] : []));
    expect(totals).toEqual([1, 2]);
  });
});

const fold = (state: CounterState, event: DomainEvent) => counterDecider.evolve(state, event);

/**
 * A counter over every counter stream: its state is shared by them all, as the board's is by its lanes
 * and runs. `tailFolds`: folded through the head it is given, it keeps its committed state and folds
 * the log's tail onto it when refused (the board's way).
 */
async function sharedCounterActor(store: EventStore, name: string, guarded: boolean, tailFolds = false) {
  const system = startActorSystem({ onError: () => undefined });
  onTestFinished(() => stopSystem(system));
  const hydrateThrough = async (until: number) => {
    let state = counterDecider.initialState(STREAM);
    await foldLog(store, 0, (event) => (state = fold(state, event)), { until });
    return state;
  };
  const actor = new DecidingActor<CounterState>(system, store, {
    name,
    decider: counterDecider,
    hydrate: tailFolds ? hydrateThrough : async () => foldOf(await store.readAll(0, 10_000)),
    ...(tailFolds
      ? { tailFold: { fold, readAfter: (after: number, visit: (event: DomainEvent) => void) => foldLog(store, after, visit), copy: structuredClone } }
      : {}),
    ...(guarded ? { guardKinds: ['counter'] } : {}),
  });
  await actor.read(() => null);
  return actor;
}

/** Two processes' worth of stores on one fresh PostgreSQL log: each writes as a writer of its own. */
async function twoProcessesOnOneLog(): Promise<EventStore[]> {
  const where = await postgresKind.fresh();
  return [
    await postgresKind.open(where, { pollMs: 600_000, writer: 'board-1:1' }),
    await postgresKind.open(where, { pollMs: 600_000, writer: 'board-2:1' }),
  ];
}

describe('a decision on state shared by many streams, two processes deciding for it (PostgreSQL, docs/rules.md#postgresql-board)', () => {
  const twoWriters = {
    postgres: async (): Promise<[EventStore, EventStore]> => {
      const [first, second] = await twoProcessesOnOneLog();
      return [first!, second!];
    },
    // The simulator's two boards: two handles on one SQLite log, checking guards as PostgreSQL does.
    'sqlite, guards checked': async (): Promise<[EventStore, EventStore]> => {
      const first = await openSqliteStore(':memory:', { pollMs: 600_000, writer: 'board-1:1', codec: counterCodec, checkGuards: true });
      const second = new SqliteEventStore(first.db, { pollMs: 600_000, writer: 'board-2:1', codec: counterCodec, checkGuards: true });
      onTestFinished(() => first.close());
      return [first, second];
    },
  };
  it.each(Object.entries(twoWriters))(
    'on %s: given two writers of one shared state on different streams, when one decides after the other committed unseen, then its append is refused by its guard, and it decides again on the log as it is',
    async (_name, open) => {
      const [first, second] = await open();
      const a = await sharedCounterActor(first!, 'shared-1', true);
      const b = await sharedCounterActor(second!, 'shared-2', true);

      await b.input(asInput({ stream: 'counter:b', type: 'counter.bump.requested', data: { by: 1, limit: 100 }, at: T0 + 1 }));
      const outcome = await a.input(asInput({ stream: 'counter:a', type: 'counter.bump.requested', data: { by: 1, limit: 100 }, at: T0 + 2 }));
      // Its own appends since do not count against it: the next is decided on its state as it stands.
      const next = await a.input(asInput({ stream: 'counter:a', type: 'counter.bump.requested', data: { by: 1, limit: 100 }, at: T0 + 3 }));

      expect(outcome).toMatchObject({ ok: true, decisions: [{ type: 'counter.bumped', data: { total: 2 } }] });
      expect(next).toMatchObject({ ok: true, decisions: [{ type: 'counter.bumped', data: { total: 3 } }] });
      const totals = withCounters(await first!.readAll(0, 100)).flatMap((e) => (e.type === 'counter.bumped' ? [e.data.total] : []));
      expect(totals).toEqual([1, 2, 3]);
    },
  );
});

describe('a guarded actor refused because another process committed first (PostgreSQL, docs/rules.md#postgresql-board)', () => {
  it('given a long log, when its decision is refused by its guard, then it folds only the tail since its committed state, not the log again, and decides on it', async () => {
    const [first, second] = await twoProcessesOnOneLog();
    const history = Array.from({ length: 300 }, (_, i) => ({ stream: 'counter:z', type: 'counter.bumped', data: { total: i + 1 }, at: T0 }));
    await appendOrThrow(second!, { expected: { 'counter:z': 0 }, events: history });
    let rowsRead = 0;
    const counted = Object.create(first!) as EventStore;
    counted.readAll = async (after, limit) => {
      const page = await first!.readAll(after, limit);
      rowsRead += page.length;
      return page;
    };
    const a = await sharedCounterActor(counted, 'shared-tail', true, true);
    const b = await sharedCounterActor(second!, 'shared-rival', true);
    await a.input(asInput({ stream: 'counter:a', type: 'counter.bump.requested', data: { by: 1, limit: 1_000 }, at: T0 + 1 }));

    await b.input(asInput({ stream: 'counter:b', type: 'counter.bump.requested', data: { by: 1, limit: 1_000 }, at: T0 + 2 }));
    rowsRead = 0;
    const outcome = await a.input(asInput({ stream: 'counter:a', type: 'counter.bump.requested', data: { by: 1, limit: 1_000 }, at: T0 + 3 }));

    // Refused once (the rival's bump unseen), then decided on the state with it: 300 + 1 + 1 + 1.
    expect(outcome).toMatchObject({ ok: true, decisions: [{ type: 'counter.bumped', data: { total: 303 } }] });
    // The rival's input and decision, not the 300 events and its own two again.
    expect(rowsRead).toBeLessThanOrEqual(4);
  });
});
