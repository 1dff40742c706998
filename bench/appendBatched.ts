/**
 * 2. Batched appends: 1,000 events per append (one transaction), against raw better-sqlite3 doing
 * 1,000 prepared INSERTs in one immediate transaction after the same version check.
 * Run under the product's default, synchronous=FULL (one fsync per 1,000 events hardly shows).
 */
import type { NewEvent } from '../events/envelope.ts';
import { StaleVersionError } from '../runtime/store/eventStore.ts';
import { type Benchmark, baselineStore, disposeStore, freshStore, interleaved, progress, type Row, ratioRow, type Side } from './harness.ts';

const STREAM = 'counter:batched';
const AT = 1_700_000_000_000;
const PER_APPEND = 1000;
/** Appends per timed chunk. */
const PER_CHUNK = 5;

async function subject(): Promise<Side> {
  const { store, path } = await freshStore('batched-subject', 'full');
  let from = 0;
  return {
    async chunk() {
      for (let b = 0; b < PER_CHUNK; b++, from += PER_APPEND) {
        const events: NewEvent[] = [];
        for (let i = 1; i <= PER_APPEND; i++) {
          events.push({ stream: STREAM, type: 'counter.bumped', data: { total: from + i }, at: AT + from + i });
        }
        const result = await store.append({ expected: { [STREAM]: from }, events });
        if (!result.ok) throw result.conflict;
      }
    },
    async finish() {
      check(store.db.prepare('SELECT count(*) FROM events').pluck().get(), from);
      await disposeStore(store, path);
    },
  };
}

async function baseline(): Promise<Side> {
  const { store, path } = await baselineStore('batched-baseline', 'full');
  const db = store.db;
  const version = db.prepare<[string], number | null>('SELECT max(version) FROM events WHERE stream = ?').pluck();
  // seq NULL: SQLite assigns max(seq) + 1, safe with another process writing, as the store's seq is.
  const insert = db.prepare('INSERT INTO events (seq, stream, version, type, data, at, cause, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const appendBatch = db.transaction((start: number) => {
    const actual = version.get(STREAM) ?? 0;
    if (actual !== start) throw new StaleVersionError(STREAM, start, actual);
    for (let i = 1; i <= PER_APPEND; i++) {
      insert.run(null, STREAM, start + i, 'counter.bumped', JSON.stringify({ total: start + i }), AT + start + i, null, 'bench:1');
    }
  });
  let from = 0;
  return {
    chunk() {
      for (let b = 0; b < PER_CHUNK; b++, from += PER_APPEND) appendBatch.immediate(from);
    },
    async finish() {
      check(db.prepare('SELECT count(*) FROM events').pluck().get(), from);
      await disposeStore(store, path);
    },
  };
}

function check(count: unknown, expected: number): void {
  if (count !== expected) throw new Error(`expected ${expected} events, found ${count}`);
}

export const appendBatched: Benchmark = {
  name: 'appendBatched',
  async run(options): Promise<Row[]> {
    const chunks = options.quick ? 2 : 20;
    const p = await interleaved(options.rounds, chunks, PER_CHUNK * PER_APPEND, { subject, baseline }, progress('appendBatched'));
    return [ratioRow(`2. batched appends, ${PER_APPEND}/tx, FULL (${chunks * PER_CHUNK} tx)`, 'ev/s', p, 0.8)];
  },
};
