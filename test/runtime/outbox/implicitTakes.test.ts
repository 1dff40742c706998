/**
 * Implicit takes (issue 16): for a consumer whose effects only the deciding process performs (a
 * computer's), the commit of a decision is its take and the input that answers an effect settles it,
 * so nothing is written for either. A life that ends before an effect's answer is recorded leaves it
 * to the next: performed again when at least once, recorded interrupted when at most once. Both lives
 * run in this process, so they share one writer (`host:pid`), as a restarted container's pid 1 would.
 */
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../../events/catalog.ts';
import type { Delivery, EffectConsumer, Outcome } from '../../../runtime/actors/effectConsumer.ts';
import { Outbox } from '../../../runtime/actors/outbox.ts';
import type { EventStore } from '../../../runtime/store/eventStore.ts';
import { counterEventOf } from '../../fixtures/counter/counterEvents.ts';
import { openCounterStore } from '../../fixtures/counter/counterStore.ts';
import { bumped, milestone } from '../../support/events.ts';
import { stampedAt } from '../../support/stampedAt.ts';
import { tempDbPath } from '../../support/tempStore.ts';

/** A milestone calls for an effect; a bump of the same stream after it is its answer. */
function consumer(delivery: Delivery, performed: number[], answer: (event: DomainEvent) => Promise<Outcome>): EffectConsumer<number> {
  return {
    name: `implicit-${delivery}`,
    delivery,
    concurrency: 4,
    effectOf: (event) => (counterEventOf(event)?.type === 'counter.milestone.reached' ? event.seq : null),
    implicit: {
      key: (effect) => effect.stream,
      settles: (event) => (counterEventOf(event)?.type === 'counter.bumped' ? event.stream : null),
    },
    async perform(effect, event) {
      performed.push(effect);
      return answer(event);
    },
  };
}

const answerWithBump = (store: EventStore) => async (event: DomainEvent) => {
  await store.append({ expected: { [event.stream]: 'any' }, events: [bumped(event.stream, 1)] });
  return { answered: 'bumped' } as const;
};

async function append(store: EventStore, ...events: ReturnType<typeof milestone>[]): Promise<void> {
  const result = await store.append({ expected: Object.fromEntries(events.map((e) => [e.stream, 'any'])), events });
  if (!result.ok) throw result.conflict;
}

const outboxEvents = async (store: EventStore) => (await store.readAll(0, 10_000)).filter((e) => e.stream.startsWith('outbox:'));

describe('an outbox whose takes are the decisions', () => {
  it('given effects answered by an input, then each is performed once and the outbox writes nothing, across a restart too', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    const performed: number[] = [];
    const first = new Outbox(store, consumer('at-least-once', performed, answerWithBump(store)), stampedAt(1));
    await first.open(undefined, await store.headSeq());
    const following = first.follow();
    await append(store, milestone('counter:a', 1), milestone('counter:b', 1));
    await first.drain();
    await append(store, milestone('counter:c', 1));
    await first.drain();
    // The answers (bumps) of the first two took seqs 3 and 4.
    expect(performed).toEqual([1, 2, 5]);
    following.unsubscribe();
    first.stop();
    const second = new Outbox(store, consumer('at-least-once', performed, answerWithBump(store)), stampedAt(1));
    await second.open(undefined, await store.headSeq());
    await second.drain();
    expect(performed).toEqual([1, 2, 5]);
    expect(await outboxEvents(store)).toEqual([]);
    await store.close();
  });

  it('given a life that ended before the answers, then the next performs the at-least-once ones again and records the at-most-once ones interrupted, the answered ones left alone', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    const never = () => new Promise<Outcome>(() => {});
    const [once, most]: [number[], number[]] = [[], []];
    const lives = (answer: (event: DomainEvent) => Promise<Outcome>) => [
      new Outbox(store, consumer('at-least-once', once, answer), stampedAt(1)),
      new Outbox(store, consumer('at-most-once', most, answer), stampedAt(1)),
    ];
    // The first life: the answer of seq 1 is recorded, then two effects hang when it ends.
    const first = lives(answerWithBump(store));
    for (const outbox of first) await outbox.open(undefined, await store.headSeq());
    await append(store, milestone('counter:a', 1));
    await Promise.all(first.map((o) => o.drain()));
    const hanging = lives(never);
    for (const outbox of first) outbox.stop();
    // A second outbox of the same life takes the next effects (the first is stopped): they hang, unanswered.
    const lifeFrom = await store.headSeq();
    for (const outbox of hanging) await outbox.open(undefined, lifeFrom);
    const subscriptions = hanging.map((o) => o.follow());
    await append(store, milestone('counter:b', 1), milestone('counter:c', 1));
    await expect.poll(() => [once.length, most.length]).toEqual([3, 3]);
    for (const s of subscriptions) s.unsubscribe();
    for (const outbox of hanging) outbox.stop();

    // One start for both, as a computer's: what the first one's recovery answers is this life's.
    const second = lives(answerWithBump(store));
    const secondFrom = await store.headSeq();
    for (const outbox of second) await outbox.open(undefined, secondFrom);
    await Promise.all(second.map((o) => o.drain()));
    const [b, c] = [lifeFrom + 1, lifeFrom + 2];
    expect(once).toEqual([1, b, c, b, c]);
    expect(most).toEqual([1, b, c]);
    const records = (await outboxEvents(store)).map((e) => [e.stream, e.type, 'effect' in e.data ? e.data.effect : null]);
    expect(records).toEqual([
      ['outbox:implicit-at-most-once', 'outbox.interrupted', b],
      ['outbox:implicit-at-most-once', 'outbox.interrupted', c],
    ]);
    await store.close();
  });

  it('given effects this life decided before its outbox opened, then they are performed, not found interrupted', async () => {
    const store = await openCounterStore(tempDbPath());
    const performed: number[] = [];
    const lifeFrom = await store.headSeq();
    await append(store, milestone('counter:a', 1));
    const outbox = new Outbox(store, consumer('at-most-once', performed, answerWithBump(store)), stampedAt(1));
    await outbox.open(undefined, lifeFrom);
    await outbox.drain();
    expect(performed).toEqual([1]);
    expect(await outboxEvents(store)).toEqual([]);
    await store.close();
  });
});
