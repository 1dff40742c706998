import Database from 'better-sqlite3';
import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { InvalidEventError } from '../../events/codec.ts';
import { bumped } from '../support/events.ts';
import { openTempStore, tempDbPath } from '../support/tempStore.ts';

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

async function givenOneGoodEventThen(row: { type: string; data: string }) {
  const path = tempDbPath();
  const store = await openTempStore(path);
  await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
  insertRaw(path, { seq: 2, stream: 'counter:a', version: 2, ...row });
  return store;
}

describe('reading rows back from the log', () => {
  it('given a row whose data is not JSON, when read, then InvalidEventError names its seq and type', async () => {
    const store = await givenOneGoodEventThen({ type: 'counter.bumped', data: '{"total":' });

    const read = store.readAll(0, 10);

    await expect(read).rejects.toBeInstanceOf(InvalidEventError);
    await expect(read).rejects.toThrow(/event seq 2 of type "counter\.bumped": data is not JSON/);
  });

  it('given a row whose data fails its schema, when read, then InvalidEventError names its seq, type and field', async () => {
    const store = await givenOneGoodEventThen({ type: 'counter.bumped', data: '{"total":"three"}' });

    const read = store.readAll(0, 10);

    await expect(read).rejects.toBeInstanceOf(InvalidEventError);
    await expect(read).rejects.toThrow(/event seq 2 of type "counter\.bumped": total/);
    await expect(read).rejects.toMatchObject({ seq: 2, type: 'counter.bumped' });
  });

  it('given a row of an unknown type, when read, then InvalidEventError names its seq and type', async () => {
    const store = await givenOneGoodEventThen({ type: 'run.teleported', data: '{}' });

    await expect(store.readAll(0, 10)).rejects.toThrow(/event seq 2 of type "run\.teleported": unknown event type/);
    await expect(store.readStream('counter:a')).rejects.toBeInstanceOf(InvalidEventError);
    await expect(store.lastOfStream('counter:a')).rejects.toBeInstanceOf(InvalidEventError);
  });

  it('given a bad row, then the rows before it still read, and the store keeps appending', async () => {
    const store = await givenOneGoodEventThen({ type: 'run.teleported', data: '{}' });

    expect(await store.readAll(0, 1)).toMatchObject([{ seq: 1 }]);
    const result = await store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1)] });
    expect(result.ok && result.events[0]!.seq).toBe(3);
  });

  it("given a 'counter.bump.requested' row in its legacy shape {by}, when read, then it is upcast to {by, limit: 100} and the row is not rewritten", async () => {
    const path = tempDbPath();
    const store = await openTempStore(path);
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
    const store = await givenOneGoodEventThen({ type: 'counter.bump.requested', data: '{"by":0}' });

    await expect(store.readAll(0, 10)).rejects.toThrow(/event seq 2 of type "counter\.bump\.requested"/);
  });

  it('given a bad row in the log, when a subscriber reaches it, then the subscription ends with InvalidEventError naming it, not a crash', async () => {
    const store = await givenOneGoodEventThen({ type: 'run.teleported', data: '{}' });

    const error = await firstValueFrom(store.subscribe(0).pipe(toArray())).catch((failure: unknown) => failure);

    expect(error).toBeInstanceOf(InvalidEventError);
    expect(error).toMatchObject({ seq: 2, type: 'run.teleported' });
  });
});
