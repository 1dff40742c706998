import { describe, expect, it } from 'vitest';
import { InvalidEventError } from '../../events/codec.ts';
import { StaleVersionError } from '../../runtime/store/eventStore.ts';
import { bumped, bumpRequested, milestone, oneTo } from '../support/events.ts';
import { freshStore, storeKinds } from '../support/storeKinds.ts';

describe.each(storeKinds)('on $name', (kind) => {
  describe('append: optimistic concurrency on stream versions', () => {
    it('given a new stream, when appending with expected 0, then the events get versions 1.. and seqs 1..', async () => {
      const { store } = await freshStore(kind);

      const result = await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1), bumped('counter:a', 2)] });

      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expect(result.events.map((e) => [e.seq, e.stream, e.version])).toEqual([
        [1, 'counter:a', 1],
        [2, 'counter:a', 2],
      ]);
      expect(result.events.every((e) => e.actor === store.writer)).toBe(true);
      expect(await store.streamVersion('counter:a')).toBe(2);
    });

    it('given a stream at version 2, when appending with a stale expected version, then it is refused with StaleVersionError and nothing is written', async () => {
      const { store } = await freshStore(kind);
      await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1), bumped('counter:a', 2)] });

      const result = await store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 3)] });

      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.conflict).toBeInstanceOf(StaleVersionError);
      expect(result.conflict).toMatchObject({ stream: 'counter:a', expected: 1, actual: 2 });
      expect(await store.headSeq()).toBe(2);
      expect(await store.streamVersion('counter:a')).toBe(2);
    });

    it('given a stream that exists, when appending with expected 0 (must not exist), then it is refused', async () => {
      const { store } = await freshStore(kind);
      await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

      const result = await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 2)] });

      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.conflict).toMatchObject({ stream: 'counter:a', expected: 0, actual: 1 });
    });

    it("given expected 'any', when appending to a stream at any version, then it commits", async () => {
      const { store } = await freshStore(kind);
      await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

      const result = await store.append({ expected: { 'counter:a': 'any' }, events: [bumped('counter:a', 2)] });

      expect(result.ok && result.events[0]!.version).toBe(2);
    });

    it('given several streams in one append, when one of them is stale, then none of its events is written', async () => {
      const { store } = await freshStore(kind);
      await store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1)] });

      const result = await store.append({
        expected: { 'counter:a': 0, 'counter:b': 0, 'counter:c': 0 },
        events: [bumped('counter:a', 10), bumped('counter:b', 11), bumped('counter:c', 12)],
      });

      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.conflict).toMatchObject({ stream: 'counter:b', expected: 0, actual: 1 });
      expect(await store.readAll(0, 100)).toHaveLength(1);
      expect(await store.streamVersion('counter:a')).toBe(0);
      expect(await store.streamVersion('counter:c')).toBe(0);
    });

    it('given several streams in one append, when all are current, then all its events commit with consecutive seqs', async () => {
      const { store } = await freshStore(kind);

      const result = await store.append({
        expected: { 'counter:a': 0, 'counter:b': 0 },
        events: [bumped('counter:a', 1), bumped('counter:b', 2), bumped('counter:a', 3)],
      });

      expect(result.ok && result.events.map((e) => [e.seq, e.stream, e.version])).toEqual([
        [1, 'counter:a', 1],
        [2, 'counter:b', 1],
        [3, 'counter:a', 2],
      ]);
    });

    it('given a stream named in expected but not written, when it has moved on, then the append is refused (a guard)', async () => {
      const { store } = await freshStore(kind);
      await store.append({ expected: { 'lane:x': 0 }, events: [bumped('lane:x', 1)] });

      const result = await store.append({ expected: { 'lane:x': 0, 'counter:a': 0 }, events: [bumped('counter:a', 2)] });

      expect(result.ok).toBe(false);
      expect(await store.headSeq()).toBe(1);
    });

    it('given a decision whose cause is {inBatch: 0}, when appended, then its cause is the seq of the input in that append', async () => {
      const { store } = await freshStore(kind);
      await store.append({ expected: { 'counter:z': 0 }, events: [bumped('counter:z', 1)] });

      const result = await store.append({
        expected: { 'counter:a': 0 },
        events: [
          bumpRequested('counter:a', 1, 100),
          { ...bumped('counter:a', 1), cause: { inBatch: 0 } },
          { ...milestone('counter:a', 1), cause: 1 },
        ],
      });

      expect(result.ok && result.events.map((e) => [e.seq, e.cause])).toEqual([
        [2, null],
        [3, 2],
        [4, 1],
      ]);
      const stored = await store.readAll(1, 10);
      expect(stored.map((e) => e.cause)).toEqual([null, 2, 1]);
    });

    it('given a cause naming a later event of the same append, when appending, then it is rejected and nothing is written', async () => {
      const { store } = await freshStore(kind);

      await expect(
        store.append({ expected: { 'counter:a': 0 }, events: [{ ...bumped('counter:a', 1), cause: { inBatch: 1 } }, bumped('counter:a', 2)] }),
      ).rejects.toThrow(/cause/);
      expect(await store.headSeq()).toBe(0);
    });

    it('given an event for a stream the append names no expected version for, when appending, then it is rejected and nothing is written', async () => {
      const { store } = await freshStore(kind);

      await expect(store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1), bumped('counter:b', 2)] })).rejects.toThrow(
        /counter:b names no expected version/,
      );
      expect(await store.headSeq()).toBe(0);
    });

    it('given an unknown event type, when appending, then InvalidEventError refuses it before anything is written', async () => {
      const { store } = await freshStore(kind);

      const append = store.append({
        expected: { 'counter:a': 0 },
        events: [bumped('counter:a', 1), { stream: 'counter:a', type: 'counter.exploded', data: {}, at: 1 }],
      });

      await expect(append).rejects.toBeInstanceOf(InvalidEventError);
      await expect(append).rejects.toThrow(/counter\.exploded.*unknown event type/);
      expect(await store.headSeq()).toBe(0);
    });

    it('given data failing its schema, when appending, then InvalidEventError names the field and nothing is written', async () => {
      const { store } = await freshStore(kind);

      const append = store.append({
        expected: { 'counter:a': 0 },
        events: [{ stream: 'counter:a', type: 'counter.bump.requested', data: { by: -1, limit: 10 }, at: 1 }],
      });

      await expect(append).rejects.toBeInstanceOf(InvalidEventError);
      await expect(append).rejects.toThrow(/counter\.bump\.requested.*by/);
      expect(await store.headSeq()).toBe(0);
    });

    it('given extra fields in strict data, or a bad at, when appending, then it is refused', async () => {
      const { store } = await freshStore(kind);

      await expect(
        store.append({ expected: { 'counter:a': 0 }, events: [{ stream: 'counter:a', type: 'counter.bumped', data: { total: 1, x: 1 }, at: 1 }] }),
      ).rejects.toBeInstanceOf(InvalidEventError);
      await expect(store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1, 1.5)] })).rejects.toThrow(/bad at/);
      expect(await store.headSeq()).toBe(0);
    });

    it('given appends still queued for the next group commit, when the store is closed, then they are committed first', async () => {
      const where = await kind.fresh();
      const store = await kind.open(where);

      const pending = store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
      await store.close();

      expect(await pending).toMatchObject({ ok: true, events: [{ seq: 1 }] });
      const reopened = await kind.open(where);
      expect(await reopened.headSeq()).toBe(1);
    });

    it('given a closed store, when appending, then it is rejected', async () => {
      const { store } = await freshStore(kind);
      await store.close();

      await expect(store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] })).rejects.toThrow(/closed/);
    });
  });

  describe('append: group commit', () => {
    it('given many appends issued in the same tick, when they commit, then all succeed with contiguous seqs and a stale one among them is refused alone', async () => {
      const { store } = await freshStore(kind);
      await store.append({ expected: { 'counter:old': 0 }, events: [bumped('counter:old', 0)] });

      const appends = Array.from({ length: 40 }, (_, i) =>
        store.append({ expected: { [`counter:s${i}`]: 0 }, events: [bumped(`counter:s${i}`, i), milestone(`counter:s${i}`, i)] }),
      );
      const stale = store.append({ expected: { 'counter:old': 0 }, events: [bumped('counter:old', 99)] });
      const moreAppends = Array.from({ length: 10 }, (_, i) =>
        store.append({ expected: { [`counter:t${i}`]: 0 }, events: [bumped(`counter:t${i}`, i)] }),
      );
      const results = await Promise.all([...appends, stale, ...moreAppends]);

      const refused = results.filter((r) => !r.ok);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatchObject({ ok: false, conflict: { stream: 'counter:old', expected: 0, actual: 1 } });
      const seqs = results.flatMap((r) => (r.ok ? r.events.map((e) => e.seq) : []));
      expect(seqs).toEqual(oneTo(40 * 2 + 10).map((n) => n + 1));
      expect(await store.headSeq()).toBe(91);
    });

    it('given two appends to one stream in the same tick, when the second expects the version the first leaves, then both commit in order', async () => {
      const { store } = await freshStore(kind);

      const [first, second, third] = await Promise.all([
        store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1), bumped('counter:a', 2)] }),
        store.append({ expected: { 'counter:a': 2 }, events: [bumped('counter:a', 3)] }),
        store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 4)] }),
      ]);

      expect(first!.ok && second!.ok).toBe(true);
      expect(second!.ok && second!.events[0]).toMatchObject({ seq: 3, version: 3 });
      expect(third).toMatchObject({ ok: false, conflict: { stream: 'counter:a', expected: 0, actual: 3 } });
      expect((await store.readStream('counter:a')).map((e) => e.version)).toEqual([1, 2, 3]);
    });
  });

  describe('reading the log', () => {
    it('given events in several streams, then readAll, readStream, lastOfStream, streamVersion and headSeq agree with what was appended', async () => {
      const { store } = await freshStore(kind);
      await store.append({ expected: { 'counter:a': 0, 'counter:b': 0 }, events: [bumped('counter:a', 1), bumped('counter:b', 2)] });
      await store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 3), milestone('counter:a', 3)] });

      expect((await store.readAll(0, 100)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect((await store.readAll(1, 2)).map((e) => e.seq)).toEqual([2, 3]);
      expect(await store.readAll(4, 10)).toEqual([]);
      expect((await store.readStream('counter:a')).map((e) => [e.seq, e.version, e.type])).toEqual([
        [1, 1, 'counter.bumped'],
        [3, 2, 'counter.bumped'],
        [4, 3, 'counter.milestone.reached'],
      ]);
      expect((await store.readStream('counter:a', 1)).map((e) => e.version)).toEqual([2, 3]);
      expect(await store.readStream('counter:none')).toEqual([]);
      expect(await store.lastOfStream('counter:a')).toMatchObject({ seq: 4, version: 3, data: { total: 3 } });
      expect(await store.lastOfStream('counter:none')).toBeNull();
      expect(await store.streamVersion('counter:b')).toBe(1);
      expect(await store.streamVersion('counter:none')).toBe(0);
      expect(await store.headSeq()).toBe(4);
    });

    it('given an append, then what is read back equals what append returned', async () => {
      const { store } = await freshStore(kind);

      const result = await store.append({
        expected: { 'counter:a': 0 },
        events: [bumpRequested('counter:a', 2, 50, 1234), { ...bumped('counter:a', 2, 1234), cause: { inBatch: 0 } }],
      });

      expect(result.ok).toBe(true);
      if (result.ok) expect(await store.readAll(0, 10)).toEqual(result.events);
    });
  });
});
