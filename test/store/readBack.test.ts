import Database from 'better-sqlite3';
import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { type ForeignRow, InvalidEventError } from '../../events/codec.ts';
import type { SqliteStoreOptions } from '../../events/store/sqlite/sqliteEventStore.ts';
import { foldLog } from '../../projections/foldLog.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { bumped } from '../support/events.ts';
import { tempDbPath } from '../support/tempStore.ts';

/**
 * Writes a row behind the store's back, as another (older, newer or broken) writer could have. The
 * indexes on `json_extract(data, ...)` refuse text that is not JSON at insert time; a file written
 * before they existed (or by a tool that dropped them) can still hold such a row, so they go first.
 */
function insertRaw(path: string, row: { seq: number; stream: string; version: number; type: string; data: string }): void {
  const raw = new Database(path);
  try {
    raw.exec('DROP INDEX IF EXISTS events_run_id; DROP INDEX IF EXISTS events_session_id');
    raw
      .prepare('insert into events (seq, stream, version, type, data, at, cause, actor) values (?, ?, ?, ?, ?, ?, null, ?)')
      .run(row.seq, row.stream, row.version, row.type, row.data, 1000, 'elsewhere:1');
  } finally {
    raw.close();
  }
}

/** A log of one good event then `row` at seq 2, opened as given (by default: skipping, the rows named in `named`). */
async function givenOneGoodEventThen(row: { type: string; data: string }, options: SqliteStoreOptions = {}) {
  const path = tempDbPath();
  const named: ForeignRow[] = [];
  const store = await openCounterStore(path, { foreignRows: (foreign) => named.push(foreign), ...options });
  await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
  insertRaw(path, { seq: 2, stream: 'counter:a', version: 2, ...row });
  return { store, named, path };
}

describe('reading rows back from the log: a row this version cannot read is skipped and named once', () => {
  it('given a row whose data is not JSON, when read, then it is skipped and named with its seq and type', async () => {
    const { store, named } = await givenOneGoodEventThen({ type: 'counter.bumped', data: '{"total":' });

    expect(await store.readAll(0, 10)).toMatchObject([{ seq: 1 }]);
    expect(named).toEqual([{ seq: 2, stream: 'counter:a', type: 'counter.bumped', problem: expect.stringMatching(/^data is not JSON/) }]);
  });

  it('given a row whose data fails its schema, when read, then it is skipped and named with its seq, type and field', async () => {
    const { store, named } = await givenOneGoodEventThen({ type: 'counter.bumped', data: '{"total":"three"}' });

    expect(await store.readAll(0, 10)).toMatchObject([{ seq: 1 }]);
    expect(named).toMatchObject([{ seq: 2, type: 'counter.bumped', problem: expect.stringMatching(/^total/) }]);
  });

  it('given a row of an unknown type, when read every way, then each read skips it and it is named once', async () => {
    const { store, named } = await givenOneGoodEventThen({ type: 'run.teleported', data: '{}' });

    expect(await store.readAll(0, 10)).toMatchObject([{ seq: 1 }]);
    expect(await store.readStream('counter:a')).toMatchObject([{ seq: 1 }]);
    expect(await store.lastOfStream('counter:a')).toMatchObject({ seq: 1 });
    expect(await store.readEntity('counter:a')).toMatchObject([{ seq: 1 }]);
    expect(named).toMatchObject([{ seq: 2, type: 'run.teleported', problem: expect.stringContaining('unknown event type') }]);
  });

  it('given a store opened to fail on them, when read, then InvalidEventError names the seq, type and problem', async () => {
    const { store, named } = await givenOneGoodEventThen({ type: 'counter.bumped', data: '{"total":"three"}' }, { foreignRows: 'fail' });

    const read = store.readAll(0, 10);

    await expect(read).rejects.toBeInstanceOf(InvalidEventError);
    await expect(read).rejects.toThrow(/event seq 2 of type "counter\.bumped": total/);
    await expect(store.readStream('counter:a')).rejects.toMatchObject({ seq: 2, type: 'counter.bumped' });
    expect(named).toEqual([]);
  });

  it('given a bad row, then a page reads on past it, and the store keeps appending', async () => {
    const { store } = await givenOneGoodEventThen({ type: 'run.teleported', data: '{}' });
    const result = await store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1)] });
    expect(result.ok && result.events[0]!.seq).toBe(3);

    // Two events asked for: the skipped row leaves room for the one after it.
    expect((await store.readAll(0, 2)).map((e) => e.seq)).toEqual([1, 3]);
    expect((await store.readAll(1, 1)).map((e) => e.seq)).toEqual([3]);
  });

  it('given a bad row between good ones, when folded up to a seq, then the fold skips it and stops at that seq', async () => {
    const { store } = await givenOneGoodEventThen({ type: 'run.teleported', data: '{}' });
    await store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1), bumped('counter:b', 2)] });
    const seen: number[] = [];

    const last = await foldLog(store, 0, (event) => seen.push(event.seq), { until: 2, pageSize: 2 });

    expect(seen).toEqual([1]);
    expect(last).toBe(1);
  });

  it("given a 'counter.bump.requested' row in its legacy shape {by}, when read, then it is upcast to {by, limit: 100} and the row is not rewritten", async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    insertRaw(path, { seq: 1, stream: 'counter:a', version: 1, type: 'counter.bump.requested', data: '{"by":7}' });

    const [event] = await store.readAll(0, 10);

    expect(event).toMatchObject({ seq: 1, type: 'counter.bump.requested', data: { by: 7, limit: 100 } });
    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.prepare('select data from events where seq = 1').pluck().get()).toBe('{"by":7}');
    } finally {
      raw.close();
    }
  });

  it('given a row matching neither the current nor the legacy shape, when read, then it is refused, not half-upcast', async () => {
    const { store, named } = await givenOneGoodEventThen({ type: 'counter.bump.requested', data: '{"by":0}' });

    expect(await store.readAll(0, 10)).toMatchObject([{ seq: 1 }]);
    expect(named).toMatchObject([{ seq: 2, type: 'counter.bump.requested' }]);
  });

  it('given a bad row in the log, when a subscriber reaches it, then the subscription goes on past it to what comes next', async () => {
    const { store, named } = await givenOneGoodEventThen({ type: 'run.teleported', data: '{}' });
    const seen = firstValueFrom(store.subscribe(0).pipe(take(2), toArray()));

    await store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1)] });

    expect((await seen).map((e) => e.seq)).toEqual([1, 3]);
    expect(named).toMatchObject([{ seq: 2, type: 'run.teleported' }]);
  });
});
