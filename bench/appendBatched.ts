/**
 * 2. Batched appends: 1,000 events per append (one transaction), against raw better-sqlite3 doing
 * 1,000 prepared INSERTs in one immediate transaction after the same version check.
 * Run under the product's default, synchronous=FULL (one fsync per 1,000 events hardly shows).
 */
import { StaleVersionError } from '../events/store/eventStore.ts';
import type { NewDomainEvent } from '../events/catalog.ts';
import { type Benchmark, disposeStore, freshStore, now, paired, progress, ratioRow, type Row } from './harness.ts';

const STREAM = 'counter:batched';
const AT = 1_700_000_000_000;
const PER_APPEND = 1000;

async function subject(batches: number): Promise<number> {
  const { store, path } = await freshStore('batched-subject', 'full');
  try {
    const start = now();
    for (let b = 0; b < batches; b++) {
      const from = b * PER_APPEND;
      const events: NewDomainEvent[] = [];
      for (let i = 1; i <= PER_APPEND; i++) {
        events.push({ stream: STREAM, type: 'counter.bumped', data: { total: from + i }, at: AT + from + i });
      }
      const result = await store.append({ expected: { [STREAM]: from }, events });
      if (!result.ok) throw result.conflict;
    }
    const elapsed = now() - start;
    check(store.db.prepare('SELECT count(*) FROM events').pluck().get(), batches);
    return (batches * PER_APPEND) / elapsed;
  } finally {
    await disposeStore(store, path);
  }
}

async function baseline(batches: number): Promise<number> {
  const { store, path } = await freshStore('batched-baseline', 'full');
  try {
    const db = store.db;
    const version = db.prepare<[string], number | null>('SELECT max(version) FROM events WHERE stream = ?').pluck();
    // seq NULL: SQLite assigns max(seq) + 1, safe with another process writing, as the store's seq is.
    const insert = db.prepare(
      'INSERT INTO events (seq, stream, version, type, data, at, cause, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const appendBatch = db.transaction((from: number) => {
      const actual = version.get(STREAM) ?? 0;
      if (actual !== from) throw new StaleVersionError(STREAM, from, actual);
      for (let i = 1; i <= PER_APPEND; i++) {
        insert.run(null, STREAM, from + i, 'counter.bumped', JSON.stringify({ total: from + i }), AT + from + i, null, 'bench:1');
      }
    });
    const start = now();
    for (let b = 0; b < batches; b++) appendBatch.immediate(b * PER_APPEND);
    const elapsed = now() - start;
    check(db.prepare('SELECT count(*) FROM events').pluck().get(), batches);
    return (batches * PER_APPEND) / elapsed;
  } finally {
    await disposeStore(store, path);
  }
}

function check(count: unknown, batches: number): void {
  if (count !== batches * PER_APPEND) throw new Error(`expected ${batches * PER_APPEND} events, found ${count}`);
}

export const appendBatched: Benchmark = {
  name: 'appendBatched',
  async run(options): Promise<Row[]> {
    const batches = options.quick ? 10 : 100;
    const p = await paired(options.rounds, () => subject(batches), () => baseline(batches), progress('appendBatched'));
    return [ratioRow(`2. batched appends, ${PER_APPEND}/tx, FULL (${batches} tx)`, 'ev/s', p, 0.8)];
  },
};
