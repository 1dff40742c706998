/**
 * Events and fsyncs a run (issue 16): the embedded daemon runs a no-op agent; the log's growth, the
 * transactions its store committed and the fsyncs it did to make them durable (`--sync full`: one for
 * each group commit, off the main thread), divided by the runs, with the outbox's own bookkeeping
 * (`outbox.*`) counted apart. Targets: ≤ 20 events and ≤ 3 fsyncs a run. SQLite's own fsyncs at a
 * checkpoint (two for each 1,000 WAL pages) are not counted.
 *
 *   node --expose-gc --import tsx bench/eventsPerRun.ts [--quick]
 */
import Database from 'better-sqlite3';
import type { Observable } from 'rxjs';
import { startEmbedded } from './embeddedLoad.ts';
import { type Benchmark, type Row, runIfMain } from './harness.ts';

const TARGET_EVENTS = 20;
const TARGET_FSYNCS = 3;

export interface EventsFigures {
  readonly runs: number;
  readonly events: number;
  readonly outbox: number;
  readonly transactions: number;
  readonly fsyncs: number;
  readonly byType: Record<string, number>;
}

export async function measureEvents(options: { quick?: boolean } = {}): Promise<EventsFigures> {
  const runs = options.quick ? 200 : 1_000;
  const embedded = await startEmbedded('events');
  try {
    await embedded.load(50);
    // The store's own counts of committed transactions and of fsyncs (a bench may look inside: nothing else does).
    const store = embedded.daemon.store as unknown as { commits: Observable<unknown>; fsyncs: number };
    let transactions = 0;
    const counting = store.commits.subscribe(() => transactions++);
    const fsyncsFrom = store.fsyncs;
    const from = await embedded.daemon.store.headSeq();
    await embedded.load(runs);
    counting.unsubscribe();
    const fsyncs = store.fsyncs - fsyncsFrom;
    const to = await embedded.daemon.store.headSeq();
    const db = new Database(embedded.db, { readonly: true });
    try {
      const rows = db.prepare('SELECT type, count(*) AS n FROM events WHERE seq > ? AND seq <= ? GROUP BY type ORDER BY n DESC').all(from, to) as {
        type: string;
        n: number;
      }[];
      const byType = Object.fromEntries(rows.map((r) => [r.type, r.n / runs]));
      const outbox = rows.filter((r) => r.type.startsWith('outbox.')).reduce((n, r) => n + r.n, 0);
      return { runs, events: (to - from) / runs, outbox: outbox / runs, transactions: transactions / runs, fsyncs: fsyncs / runs, byType };
    } finally {
      db.close();
    }
  } finally {
    await embedded.close();
  }
}

export async function runEventsBench(options: { quick?: boolean } = {}): Promise<Row[]> {
  const f = await measureEvents(options);
  const types = Object.entries(f.byType)
    .map(([t, n]) => `${t} ${n.toFixed(1)}`)
    .join(', ');
  return [
    {
      benchmark: `events a run: embedded daemon, ${f.runs} no-op runs`,
      subject: `${f.events.toFixed(1)} events`,
      baseline: `${f.outbox.toFixed(1)} outbox.*`,
      ratio: `${f.fsyncs.toFixed(1)} fsyncs, ${f.transactions.toFixed(1)} transactions`,
      target: `≤ ${TARGET_EVENTS}, ≤ ${TARGET_FSYNCS} fsyncs`,
      pass: f.events <= TARGET_EVENTS && f.fsyncs <= TARGET_FSYNCS,
      note: `fsyncs: the store's own fdatasyncs of the WAL a run (--sync full), transactions: its commits a run; by type: ${types}`,
    },
  ];
}

export const eventsPerRun: Benchmark = {
  name: 'eventsPerRun',
  run: (options) => runEventsBench({ quick: options.quick }),
};

runIfMain(import.meta.url, async (argv) => {
  const rows = await runEventsBench({ quick: argv.includes('--quick') });
  for (const row of rows)
    console.log(`${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: ${row.subject}, ${row.baseline}, ${row.ratio}\n      ${row.note}`);
  return rows.every((r) => r.pass) ? 0 : 1;
});
