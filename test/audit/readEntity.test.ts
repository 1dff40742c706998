import { describe, expect, it } from 'vitest';
import { appendOrThrow } from '../../runtime/store/eventStore.ts';
import { SELECT_ENTITY } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { bumped } from '../support/events.ts';
import { tempDbPath } from '../support/tempStore.ts';

describe('store: one entity across owners', () => {
  it('reads `kind:id` from the board’s stream and every computer’s, in seq order, and nothing else', async () => {
    const store = await openCounterStore();
    const streams = ['c1/counter:a', 'counter:a', 'c2/counter:a', 'counter:ab', 'c1/counter:b', 'c1/lane:a'];
    let total = 0;
    for (let round = 0; round < 3; round++) {
      for (const stream of streams) {
        await appendOrThrow(store, { expected: { [stream]: 'any' }, events: [bumped(stream, ++total)] });
      }
    }
    const events = await store.readEntity('counter:a');
    expect(events.map((e) => e.stream)).toEqual(Array.from({ length: 3 }, () => ['c1/counter:a', 'counter:a', 'c2/counter:a']).flat());
    expect(events.map((e) => e.seq)).toEqual([...events.map((e) => e.seq)].sort((a, b) => a - b));
    expect(await store.readEntity('counter:zz')).toEqual([]);
  });

  it('finds them through index events_stream_id, already in seq order (no scan, no sort)', async () => {
    const store = await openCounterStore();
    const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${SELECT_ENTITY}`).all('run:r1') as { detail: string }[];
    const details = plan.map((p) => p.detail).join(' | ');
    expect(details).toMatch(/^SEARCH events USING (COVERING )?INDEX events_stream_id \(<expr>=\?\)$/);
    expect(details).not.toContain('TEMP B-TREE');
  });

  it('brings a log written before the index forward on open, and reads its old rows through it', async () => {
    const path = tempDbPath();
    const old = await openCounterStore(path);
    await appendOrThrow(old, { expected: { 'c1/counter:a': 0 }, events: [bumped('c1/counter:a', 1)] });
    // As an older runledger left the file: no index, no record of migrations 0003 and later.
    old.db.exec(
      `DROP INDEX events_stream_id; DROP INDEX events_run_id; DROP INDEX events_session_id; DROP TABLE projection_snapshots; DELETE FROM kysely_migration WHERE name >= '0003'`,
    );
    await old.close();
    const store = await openCounterStore(path);
    expect(store.db.prepare(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'events_stream_id'`).pluck().get()).toBe(1);
    expect((await store.readEntity('counter:a')).map((e) => e.stream)).toEqual(['c1/counter:a']);
  });
});
