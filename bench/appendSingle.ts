/**
 * 1. Single-event appends, one transaction each, awaited one after the other (no group commit can
 * help: every append is alone in its turn of the event loop), against raw better-sqlite3 doing the
 * same work by hand: an immediate transaction per event holding the version check and one INSERT.
 */
import { StaleVersionError } from '../runtime/store/eventStore.ts';
import type { SqliteEventStore } from '../runtime/store/sqlite/sqliteEventStore.ts';
import {
  type Benchmark,
  baselineStore,
  disposeStore,
  freshStore,
  interleaved,
  progress,
  type Row,
  ratioRow,
  type Side,
  type Sync,
} from './harness.ts';

const STREAM = 'counter:single';
const AT = 1_700_000_000_000;

async function subject(sync: Sync, perChunk: number): Promise<Side> {
  const { store, path } = await freshStore('single-subject', sync);
  let v = 0;
  return {
    async chunk() {
      for (const end = v + perChunk; v < end; v++) {
        const result = await store.append({
          expected: { [STREAM]: v },
          events: [{ stream: STREAM, type: 'counter.bumped', data: { total: v + 1 }, at: AT + v }],
        });
        if (!result.ok) throw result.conflict;
      }
    },
    async finish() {
      check(store, v);
      await disposeStore(store, path);
    },
  };
}

async function baseline(sync: Sync, perChunk: number): Promise<Side> {
  const { store, path } = await baselineStore('single-baseline', sync);
  const db = store.db;
  const version = db.prepare<[string], number | null>('SELECT max(version) FROM events WHERE stream = ?').pluck();
  // seq NULL: SQLite assigns max(seq) + 1, safe with another process writing, as the store's seq is.
  const insert = db.prepare('INSERT INTO events (seq, stream, version, type, data, at, cause, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const appendOne = db.transaction((expected: number) => {
    const actual = version.get(STREAM) ?? 0;
    if (actual !== expected) throw new StaleVersionError(STREAM, expected, actual);
    insert.run(null, STREAM, expected + 1, 'counter.bumped', JSON.stringify({ total: expected + 1 }), AT + expected, null, 'bench:1');
  });
  let v = 0;
  return {
    chunk() {
      for (const end = v + perChunk; v < end; v++) appendOne.immediate(v);
    },
    async finish() {
      check(store, v);
      await disposeStore(store, path);
    },
  };
}

function check(store: SqliteEventStore, count: number): void {
  const n = store.db.prepare('SELECT count(*) FROM events').pluck().get();
  if (n !== count) throw new Error(`expected ${count} events, found ${n}`);
}

export const appendSingle: Benchmark = {
  name: 'appendSingle',
  async run(options): Promise<Row[]> {
    const rows: Row[] = [];
    for (const sync of ['normal', 'full'] as const) {
      const perChunk = sync === 'full' ? 100 : 250;
      const chunks = options.quick ? 4 : sync === 'full' ? 20 : 40;
      const p = await interleaved(
        options.rounds,
        chunks,
        perChunk,
        { subject: () => subject(sync, perChunk), baseline: () => baseline(sync, perChunk) },
        progress(`appendSingle ${sync}`),
      );
      rows.push(ratioRow(`1. single appends, sync=${sync.toUpperCase()} (${chunks * perChunk} tx)`, 'ev/s', p, 0.8));
    }
    return rows;
  },
};
