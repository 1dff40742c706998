import { describe, expect, it } from 'vitest';
import type { NewEvent } from '../../events/envelope.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { bumped, oneTo } from '../support/events.ts';
import { record } from '../support/observe.ts';
import { freshStore, storeKinds } from '../support/storeKinds.ts';

async function appendMany(store: EventStore, stream: string, from: number, count: number): Promise<void> {
  const events: NewEvent[] = Array.from({ length: count }, (_, i) => bumped(stream, from + i));
  const result = await store.append({ expected: { [stream]: 'any' }, events });
  if (!result.ok) throw result.conflict;
}

describe.each(storeKinds)('on $name', (kind) => {
  /** Appends one at a time, each awaited, so commits keep arriving while a subscriber catches up. */
  async function appendOneByOne(store: EventStore, stream: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) await appendMany(store, stream, i, 1);
  }

  describe('subscribe(after): catch up, then follow', () => {
    it('given a log longer than a page, when appends start in the same tick as subscribe, then every event arrives once, in order', async () => {
      const { store } = await freshStore(kind, { pollMs: 5 });
      await appendMany(store, 'counter:old', 0, 2_500);

      const seen = record(store.subscribe(0));
      const writing = Promise.all([
        appendOneByOne(store, 'counter:live', 40),
        appendMany(store, 'counter:burst', 0, 10),
        appendMany(store, 'counter:burst2', 0, 10),
      ]);
      await writing;
      await seen.untilCount(2_560);
      await appendMany(store, 'counter:after', 0, 1);
      const events = await seen.untilCount(2_561);

      expect(events.map((e) => e.seq)).toEqual(oneTo(2_561));
      expect(events.filter((e) => e.stream === 'counter:live').map((e) => e.version)).toEqual(oneTo(40));
    });

    it('given subscribe(after) past the start, then only events after that seq arrive', async () => {
      const { store } = await freshStore(kind);
      await appendMany(store, 'counter:a', 0, 30);

      const seen = record(store.subscribe(20));
      await appendMany(store, 'counter:a', 30, 5);
      const events = await seen.untilCount(15);

      expect(events.map((e) => e.seq)).toEqual(oneTo(15).map((n) => n + 20));
    });

    it('given a subscriber on one store, when a second store on the same file appends, then the subscriber sees those events by polling', async () => {
      const where = await kind.fresh();
      const reader = await kind.open(where, { pollMs: 10 });
      const writer = await kind.open(where);
      await appendMany(writer, 'counter:a', 0, 3);

      const seen = record(reader.subscribe(0));
      const writing = appendOneByOne(writer, 'counter:b', 20);
      await writing;
      const events = await seen.untilCount(23, 5_000);
      await appendMany(writer, 'counter:c', 0, 1);
      await seen.untilCount(24, 5_000);

      expect(seen.items.map((e) => e.seq)).toEqual(oneTo(24));
      expect(seen.items.every((e) => e.actor === writer.writer)).toBe(true);
      expect(events[23]).toMatchObject({ stream: 'counter:c' });
    });

    it('given two subscribers, when one unsubscribes, then it receives nothing more while the other goes on', async () => {
      const { store } = await freshStore(kind);
      const stopped = record(store.subscribe(0));
      const going = record(store.subscribe(0));
      await appendMany(store, 'counter:a', 0, 2);
      await stopped.untilCount(2);

      stopped.stop();
      await appendMany(store, 'counter:a', 2, 3);
      await going.untilCount(5);

      expect(stopped.items.map((e) => e.seq)).toEqual([1, 2]);
      expect(going.items.map((e) => e.seq)).toEqual(oneTo(5));
    });
  });
});
