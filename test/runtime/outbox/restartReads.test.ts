/**
 * Restart in time independent of log length (issue 16): an outbox opening again reads neither its
 * whole stream nor the log from its last take. Where its cursor got to (past events that call for
 * nothing here) and its stream's fold are kept as its mark.
 */
import { describe, expect, it } from 'vitest';
import { MARK_EVERY } from '../../../actors/outboxLedger.ts';
import type { EffectConsumer } from '../../../runtime/actors/effectConsumer.ts';
import { Outbox } from '../../../runtime/actors/outbox.ts';
import type { EventStore } from '../../../runtime/store/eventStore.ts';
import { counterEventOf } from '../../fixtures/counter/counterEvents.ts';
import { openCounterStore } from '../../fixtures/counter/counterStore.ts';
import { bumped, milestone } from '../../support/events.ts';
import { stampedAt } from '../../support/stampedAt.ts';

const announcer = (performed: number[]): EffectConsumer<number> => ({
  name: 'announce',
  delivery: 'at-most-once',
  effectOf: (event) => (counterEventOf(event)?.type === 'counter.milestone.reached' ? event.seq : null),
  async perform(effect) {
    performed.push(effect);
    return { ok: true };
  },
});

/** The store, counting the events its reads hand back. */
function counting(store: EventStore): { store: EventStore; read: () => number } {
  let read = 0;
  const wrapped = Object.create(store) as EventStore;
  wrapped.readAll = async (after, limit) => {
    const events = await store.readAll(after, limit);
    read += events.length;
    return events;
  };
  wrapped.readStream = async (stream, after) => {
    const events = await store.readStream(stream, after);
    read += events.length;
    return events;
  };
  return { store: wrapped, read: () => read };
}

async function appendBumps(store: EventStore, n: number, every: number): Promise<void> {
  for (let i = 0; i < n; i += 100) {
    const events: ReturnType<typeof bumped>[] = [];
    for (let j = i; j < Math.min(n, i + 100); j++) events.push(j % every === every - 1 ? milestone('counter:a', j) : bumped('counter:a', j));
    const result = await store.append({ expected: { 'counter:a': 'any' }, events });
    if (!result.ok) throw result.conflict;
  }
}

describe('an outbox opened again', () => {
  it('given a long log that calls for nothing since its last take, and many takes before, then a second open and drain reads about MARK_EVERY events, not the log', async () => {
    const base = await openCounterStore();
    const performed: number[] = [];
    const first = new Outbox(base, announcer(performed), stampedAt(1));
    await first.open();
    const following = first.follow();
    // Two hundred effects (each a take and a record in the outbox's stream), then a long quiet tail.
    await appendBumps(base, 2_000, 10);
    await first.drain();
    await appendBumps(base, 4 * MARK_EVERY, 1_000_000_000);
    await first.drain();
    following.unsubscribe();
    first.stop();
    expect(performed).toHaveLength(200);
    await new Promise((resolve) => setImmediate(resolve));

    const { store, read } = counting(base);
    const again = new Outbox(store, announcer(performed), stampedAt(1));
    await again.open();
    expect(await again.drain()).toBe(0);
    expect(read()).toBeLessThan(MARK_EVERY / 4);
    expect(performed).toHaveLength(200);
  });
});
