import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { type AnyEventCodec, EventCodec, type ForeignRow, InvalidEventError } from '../../events/codec.ts';
import { defineEvent, eventGroup } from '../../events/define.ts';
import { foldLog } from '../../runtime/folds/foldLog.ts';
import type { StoreOptions } from '../../runtime/store/open/openStore.ts';
import { counterCodec } from '../fixtures/counter/counterEvents.ts';
import { bumped } from '../support/events.ts';
import { type StoreKind, storeKinds } from '../support/storeKinds.ts';

/** A log of one good event then `row` at seq 2, opened as given (by default: skipping, the rows named in `named`). */
async function givenOneGoodEventThen(kind: StoreKind, row: { type: string; data: string }, options: StoreOptions = {}) {
  const where = await kind.fresh();
  const named: ForeignRow[] = [];
  const store = await kind.open(where, { foreignRows: (foreign) => named.push(foreign), ...options });
  await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
  await kind.insertRaw(where, { seq: 2, stream: 'counter:a', version: 2, ...row });
  return { store, named, where };
}

describe.each(storeKinds)('on $name', (kind) => {
  describe('reading rows back from the log: a row this version cannot read is skipped and named once', () => {
    it('given a row whose data is not JSON, when read, then it is skipped and named with its seq and type', async () => {
      const { store, named } = await givenOneGoodEventThen(kind, { type: 'counter.bumped', data: '{"total":' });

      expect(await store.readAll(0, 10)).toMatchObject([{ seq: 1 }]);
      expect(named).toEqual([{ seq: 2, stream: 'counter:a', type: 'counter.bumped', problem: expect.stringMatching(/^data is not JSON/) }]);
    });

    it('given a row whose data fails its schema, when read, then it is skipped and named with its seq, type and field', async () => {
      const { store, named } = await givenOneGoodEventThen(kind, { type: 'counter.bumped', data: '{"total":"three"}' });

      expect(await store.readAll(0, 10)).toMatchObject([{ seq: 1 }]);
      expect(named).toMatchObject([{ seq: 2, type: 'counter.bumped', problem: expect.stringMatching(/^total/) }]);
    });

    it('given a row of an unknown type, when read every way, then each read skips it and it is named once', async () => {
      const { store, named } = await givenOneGoodEventThen(kind, { type: 'run.teleported', data: '{}' });

      expect(await store.readAll(0, 10)).toMatchObject([{ seq: 1 }]);
      expect(await store.readStream('counter:a')).toMatchObject([{ seq: 1 }]);
      expect(await store.lastOfStream('counter:a')).toMatchObject({ seq: 1 });
      expect(await store.readEntity('counter:a')).toMatchObject([{ seq: 1 }]);
      expect(named).toMatchObject([{ seq: 2, type: 'run.teleported', problem: expect.stringContaining('unknown event type') }]);
    });

    it('given a store opened to fail on them, when read, then InvalidEventError names the seq, type and problem', async () => {
      const { store, named } = await givenOneGoodEventThen(kind, { type: 'counter.bumped', data: '{"total":"three"}' }, { foreignRows: 'fail' });

      const read = store.readAll(0, 10);

      await expect(read).rejects.toBeInstanceOf(InvalidEventError);
      await expect(read).rejects.toThrow(/event seq 2 of type "counter\.bumped": total/);
      await expect(store.readStream('counter:a')).rejects.toMatchObject({ seq: 2, type: 'counter.bumped' });
      expect(named).toEqual([]);
    });

    it('given a bad row, then a page reads on past it, and the store keeps appending', async () => {
      const { store } = await givenOneGoodEventThen(kind, { type: 'run.teleported', data: '{}' });
      const result = await store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1)] });
      expect(result.ok && result.events[0]!.seq).toBe(3);

      // Two events asked for: the skipped row leaves room for the one after it.
      expect((await store.readAll(0, 2)).map((e) => e.seq)).toEqual([1, 3]);
      expect((await store.readAll(1, 1)).map((e) => e.seq)).toEqual([3]);
    });

    it('given a bad row between good ones, when folded up to a seq, then the fold skips it and stops at that seq', async () => {
      const { store } = await givenOneGoodEventThen(kind, { type: 'run.teleported', data: '{}' });
      await store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1), bumped('counter:b', 2)] });
      const seen: number[] = [];

      const last = await foldLog(store, 0, (event) => seen.push(event.seq), { until: 2, pageSize: 2 });

      expect(seen).toEqual([1]);
      expect(last).toBe(1);
    });

    it("given a 'counter.bump.requested' row in its legacy shape {by}, when read, then it is upcast to {by, limit: 100} and the row is not rewritten", async () => {
      const where = await kind.fresh();
      const store = await kind.open(where);
      await kind.insertRaw(where, { seq: 1, stream: 'counter:a', version: 1, type: 'counter.bump.requested', data: '{"by":7}' });

      const [event] = await store.readAll(0, 10);

      expect(event).toMatchObject({ seq: 1, type: 'counter.bump.requested', data: { by: 7, limit: 100 } });
      expect(await kind.rawData(where, 1)).toBe('{"by":7}');
    });

    it('given a row matching neither the current nor the legacy shape, when read, then it is refused, not half-upcast', async () => {
      const { store, named } = await givenOneGoodEventThen(kind, { type: 'counter.bump.requested', data: '{"by":0}' });

      expect(await store.readAll(0, 10)).toMatchObject([{ seq: 1 }]);
      expect(named).toMatchObject([{ seq: 2, type: 'counter.bump.requested' }]);
    });

    it('given a bad row in the log, when a subscriber reaches it, then the subscription goes on past it to what comes next', async () => {
      const { store, named } = await givenOneGoodEventThen(kind, { type: 'run.teleported', data: '{}' });
      const seen = firstValueFrom(store.subscribe(0).pipe(take(2), toArray()));

      await store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1)] });

      expect((await seen).map((e) => e.seq)).toEqual([1, 3]);
      expect(named).toMatchObject([{ seq: 2, type: 'run.teleported' }]);
    });
  });

  describe('reading back what the store just committed', () => {
    it('given rows it committed, when read again and again every way, then each is decoded once at most, and every reader shares one frozen event', async () => {
      let decoded = 0;
      const counting: AnyEventCodec = {
        definitions: counterCodec.definitions,
        checkNew: (event) => counterCodec.checkNew(event),
        decodeData: (seq, type, raw) => counterCodec.decodeData(seq, type, raw),
        tryDecodeData(type, raw) {
          decoded++;
          return counterCodec.tryDecodeData(type, raw);
        },
      };
      const store = await kind.open(await kind.fresh(), { codec: counting });
      await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1), bumped('counter:a', 2)] });

      const first = await store.readAll(0, 10);
      const again = await store.readAll(0, 10);
      const stream = await store.readStream('counter:a');
      const entity = await store.readEntity('counter:a');

      expect(first.map((e) => e.data)).toEqual([{ total: 1 }, { total: 2 }]);
      // A SQLite store keeps what it committed as its rows read (the next test): none is decoded at all.
      expect(decoded).toBe(kind.name === 'sqlite' ? 0 : 2);
      for (const read of [again, stream, entity]) expect(read).toHaveLength(2);
      for (const read of [again, stream, entity]) for (const [i, event] of read.entries()) expect(event).toBe(first[i]);
      expect(Object.isFrozen(first[0]) && Object.isFrozen(first[0]!.data)).toBe(true);
    });

    it.runIf(kind.name === 'sqlite')(
      'given rows it just committed, when read every way, then none is parsed again, and each reads as its row decodes in a fresh store',
      async () => {
        // The catalog's objects leave out keys they do not know: a field it lacks, and one holding undefined, are in no row read back.
        const loose = new EventCodec(
          eventGroup(defineEvent('counter.bumped', () => z.object({ total: z.number().int(), note: z.string().optional() }))),
        );
        let decoded = 0;
        const counting: AnyEventCodec = {
          definitions: loose.definitions,
          checkNew: (event) => loose.checkNew(event),
          decodeData: (seq, type, raw) => loose.decodeData(seq, type, raw),
          tryDecodeData(type, raw) {
            decoded++;
            return loose.tryDecodeData(type, raw);
          },
        };
        const where = await kind.fresh();
        const store = await kind.open(where, { codec: counting });
        const odd = { ...bumped('counter:a', 2), data: { total: 2, unknown: 'x', note: undefined } };
        await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1), odd] });

        const reads = [await store.readAll(0, 10), await store.readStream('counter:a'), await store.readEntity('counter:a')];

        expect(decoded).toBe(0);
        const decodedAfresh = await (await kind.open(where, { codec: loose })).readAll(0, 10);
        expect(decodedAfresh.map((e) => e.data)).toStrictEqual([{ total: 1 }, { total: 2 }]);
        for (const read of reads) expect(read).toStrictEqual(decodedAfresh);
        expect(Object.isFrozen(reads[0]![1]) && Object.isFrozen(reads[0]![1]!.data)).toBe(true);
      },
    );
  });
});
