/**
 * 4. Full rebuild of a 1,000,000-event log through `rebuildProjections` (paged reads, each row decoded
 * and validated against the catalog, every projection of the registry folded), against a raw paged
 * fold: the same SELECT paged by seq (LIMIT 2000), JSON.parse, and the same fold logic inline.
 * Also: the longest the event loop was blocked while the rebuild ran (target under 50 ms).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { DomainEvent } from '../events/catalog.ts';
import { rebuildProjections } from '../runtime/folds/keeper/rebuild.ts';
import { openSqliteStore, type SqliteEventStore } from '../runtime/store/sqlite/sqliteEventStore.ts';
// A log of the test counter's events, folded by production's projections and the counters' (from the
// test fixtures: one copy of the counter, and the fold the rebuild measures keeps its work).
import { counterCodec } from '../test/fixtures/counter/counterEvents.ts';
import { projectionsWithCounters as projections } from '../test/fixtures/counter/counterRegistry.ts';
import { type Benchmark, freshPath, median, now, paired, prng, progress, type Row, ratioRow, removeLog, yieldToLoop } from './harness.ts';

const AT = 1_700_000_000_000;
const PAGE = 2000;

/**
 * Writes `total` realistic counter events over `streams` counters with raw INSERTs in one transaction:
 * each counter alternates a bump request (an input) and its decision (bumped, or refused past its
 * limit, caused by the request), with an occasional milestone; every 1,000th event an outbox
 * consumer moves its cursor, so both projections of the registry have work.
 */
export async function generateLog(total: number, streams: number): Promise<string> {
  const path = freshPath('rebuild');
  const store = await openSqliteStore(path, { sync: 'normal', writer: 'bench:1', codec: counterCodec });
  const db = store.db;
  const insert = db.prepare('INSERT INTO events (seq, stream, version, type, data, at, cause, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const random = prng(42);
  const version = new Int32Array(streams);
  const counterTotal = new Int32Array(streams);
  const limit = new Int32Array(streams).map(() => 500 + Math.floor(random() * 5000));
  const pendingBy = new Int32Array(streams); // 0: no request waiting
  const pendingSeq = new Float64Array(streams);
  const milestoneDue = new Uint8Array(streams);
  const outboxVersion = new Map<string, number>();
  db.transaction(() => {
    for (let seq = 1; seq <= total; seq++) {
      const at = AT + seq * 7;
      if (seq % 1000 === 0) {
        const consumer = `outbox:${seq % 3000 === 0 ? 'hooks' : 'notices'}`;
        const v = (outboxVersion.get(consumer) ?? 0) + 1;
        outboxVersion.set(consumer, v);
        const data = { through: seq - 1, effects: [seq - 3, seq - 2, seq - 1] };
        insert.run(seq, consumer, v, 'outbox.taken', JSON.stringify(data), at, null, 'bench:1');
        continue;
      }
      const s = Math.floor(random() * streams);
      const stream = `counter:c${s}`;
      const v = ++version[s]!;
      let type: string;
      let data: unknown;
      let cause: number | null = null;
      if (milestoneDue[s]) {
        milestoneDue[s] = 0;
        type = 'counter.milestone.reached';
        data = { total: counterTotal[s] };
      } else if (pendingBy[s]) {
        const by = pendingBy[s]!;
        cause = pendingSeq[s]!;
        pendingBy[s] = 0;
        if (counterTotal[s]! + by > limit[s]!) {
          type = 'counter.bump.refused';
          data = { total: counterTotal[s], reason: `over the limit of ${limit[s]}` };
        } else {
          const before = counterTotal[s]!;
          counterTotal[s] = before + by;
          type = 'counter.bumped';
          data = { total: counterTotal[s] };
          if (Math.floor(before / 100) !== Math.floor(counterTotal[s]! / 100)) milestoneDue[s] = 1;
        }
      } else {
        const by = 1 + Math.floor(random() * 9);
        pendingBy[s] = by;
        pendingSeq[s] = seq;
        type = 'counter.bump.requested';
        data = { by, limit: limit[s] };
      }
      insert.run(seq, stream, v, type, JSON.stringify(data), at, cause, 'bench:1');
    }
  }).immediate();
  await store.close();
  return path;
}

interface Measured {
  readonly rate: number;
  /** Longest event-loop block while folding, ms. */
  readonly blockedMs: number;
  readonly fingerprint: string;
}

/** Measures `fold` with an event-loop delay monitor running. */
async function withLoopMonitor(total: number, fold: () => Promise<string>): Promise<Measured> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  // A 1 ms probe as a second opinion: the largest gap between two of its ticks.
  let last = performance.now();
  let worstGap = 0;
  const probe = setInterval(() => {
    const t = performance.now();
    worstGap = Math.max(worstGap, t - last);
    last = t;
  }, 1);
  histogram.enable();
  await yieldToLoop();
  last = performance.now();
  const start = now();
  const fingerprint = await fold();
  const elapsed = now() - start;
  histogram.disable();
  clearInterval(probe);
  const blockedMs = Math.max(histogram.max / 1e6, worstGap);
  return { rate: total / elapsed, blockedMs, fingerprint };
}

async function subject(store: SqliteEventStore, total: number): Promise<Measured> {
  return withLoopMonitor(total, async () => {
    let head = 0;
    const reports = await rebuildProjections(store, projections, { onPage: (seq) => (head = seq) });
    if (reports.some((r) => !r.equal)) throw new Error(`rebuild disagrees: ${JSON.stringify(reports)}`);
    if (head !== total) throw new Error(`rebuild stopped at seq ${head}, not ${total}`);
    return `head ${head}`;
  });
}

async function baseline(store: SqliteEventStore, total: number): Promise<Measured> {
  const select = store.db
    .prepare('SELECT seq, stream, version, type, data, at, cause, actor FROM events WHERE seq > ? ORDER BY seq LIMIT ?')
    .raw(true);
  return withLoopMonitor(total, async () => {
    // The same folds as the subject (every registered projection's evolve), over rows read raw:
    // JSON.parse and nothing else. The ratio is then the cost of the store's read path (validation
    // against the catalog, upcasting) and of the rebuild's bookkeeping, not of the folds themselves.
    const states = projections.map((p) => p.initial());
    let last = 0;
    for (;;) {
      const rows = select.all(last, PAGE) as [number, string, number, string, string, number, number | null, string][];
      for (const row of rows) {
        const event = {
          seq: row[0],
          stream: row[1],
          version: row[2],
          type: row[3],
          data: JSON.parse(row[4]),
          at: row[5],
          cause: row[6],
          actor: row[7],
        } as DomainEvent;
        for (let i = 0; i < projections.length; i++) states[i] = projections[i]!.evolve(states[i], event);
      }
      if (rows.length) last = rows[rows.length - 1]![0];
      if (rows.length < PAGE) break;
      await yieldToLoop();
    }
    if (last !== total) throw new Error(`raw fold stopped at seq ${last}, not ${total}`);
    return `head ${last}`;
  });
}

export const rebuild: Benchmark = {
  name: 'rebuild',
  async run(options): Promise<Row[]> {
    const total = options.quick ? 100_000 : 1_000_000;
    const streams = options.quick ? 1_000 : 10_000;
    const log = progress('rebuild');
    const t0 = now();
    const path = await generateLog(total, streams);
    log(`generated ${total} events over ${streams} counters in ${(now() - t0).toFixed(1)} s`);
    const store = await openSqliteStore(path, { writer: 'bench:1', codec: counterCodec });
    const blockedSubject: number[] = [];
    const blockedBaseline: number[] = [];
    try {
      const p = await paired(
        options.rounds,
        async () => {
          const m = await subject(store, total);
          blockedSubject.push(m.blockedMs);
          return m.rate;
        },
        async () => {
          const m = await baseline(store, total);
          blockedBaseline.push(m.blockedMs);
          return m.rate;
        },
        log,
      );
      const blocked = median(blockedSubject);
      const worst = Math.max(...blockedSubject);
      return [
        ratioRow(`4. full rebuild (${total / 1000}k events, ${streams} streams)`, 'ev/s', p, 0.7),
        {
          benchmark: '4b. rebuild: longest event-loop block',
          subject: `${blocked.toFixed(1)} ms`,
          baseline: `${median(blockedBaseline).toFixed(1)} ms`,
          ratio: '-',
          target: '< 50 ms',
          pass: blocked < 50,
          note: `per round (ms) subject ${blockedSubject.map((b) => b.toFixed(1)).join(', ')} (worst ${worst.toFixed(1)}); raw fold ${blockedBaseline.map((b) => b.toFixed(1)).join(', ')}.`,
        },
      ];
    } finally {
      await store.close();
      removeLog(path);
    }
  },
};
