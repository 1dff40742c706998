import { describe, expect, it, onTestFinished } from 'vitest';
import { DecidingActor } from '../../actors/runtime/decidingActor.ts';
import { startActorSystem, stopSystem } from '../../actors/runtime/runtime.ts';
import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import type { EventStore } from '../../events/store/eventStore.ts';
import { type CounterState, counterDecider } from '../fixtures/counter/counterDecider.ts';
import { asInput, withCounters } from '../fixtures/counter/counterEvents.ts';
import { T0 } from '../support/events.ts';
import { storeKinds } from '../support/storeKinds.ts';

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
