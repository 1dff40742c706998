/**
 * Retention keeps a log bounded (docs/retention.md): the embedded daemon (board and computer in this
 * process, a no-op agent, 8 slots, 40 lanes) runs the same number of runs each simulated day, its clock
 * moved a day on between days (it is stopped and started again at each midnight, where the retention
 * round of a start runs). Subject: 7 days with `--retain-days 2`; baseline: 2 days, no retention. Both
 * are measured at the start of the next day, once its start (and its cut) is done and the daemon
 * stopped: the live log's bytes on disk (the file, its WAL; the archives beside it not counted), and
 * the time a restart then takes to a run submitted at once being done (the median of 5, the two logs'
 * restarts alternated). Each soak is made afresh a round; the figures are the medians of the rounds'
 * ratios.
 *
 *   node --expose-gc --import tsx bench/retention.ts [--quick] [--rounds N]
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { startDaemon } from '../apps/daemon/startDaemon.ts';
import { type Clock, systemClock } from '../runtime/actors/clock.ts';
import { call, loadDriver } from './embeddedLoad.ts';
import { type Benchmark, benchDir, median, type Row, runIfMain } from './harness.ts';

const DAY_MS = 86_400_000;
const SIZE_TARGET = 1.2;
const RESTART_TARGET = 1.2;
const RETAIN_DAYS = 2;
const SOAK_DAYS = 7;

/** The system clock moved on to a simulated day: its timers are real ones. */
const RESTARTS = 5;

class SimulatedClock implements Clock {
  offset = 0;
  now = (): number => Date.now() + this.offset;
  after = (ms: number, fn: () => void): (() => void) => systemClock.after(ms, fn);
}

/** Each soak's clock, left at the day after its last: its restarts are timed then. */
const clockOf = new Map<string, SimulatedClock>();

interface SoakResult {
  /** Bytes of the live log (file and WAL) at the start of the day after the last. */
  readonly bytes: number;
  /** Bytes of the archives beside it. */
  readonly archives: number;
  /** Rows in the live log. */
  readonly events: number;
  readonly db: string;
  /** Seconds from a start (at that same moment) to a run submitted at once being done: the median of a few. */
  restartS: number;
}

/**
 * `days` simulated days of `runsPerDay` runs each on a fresh log in `dir`, then the start of the next
 * day: with `retainDays`, each start (midnight) runs the retention round of a daemon started so.
 */
async function soak(label: string, days: number, runsPerDay: number, retainDays: number | undefined): Promise<SoakResult> {
  const dir = join(benchDir(), `${label}-${process.hrtime.bigint()}`);
  mkdirSync(dir, { recursive: true });
  const db = join(dir, 'runledger.db');
  const clock = new SimulatedClock();
  clockOf.set(db, clock);
  // Day 1 starts an hour after a UTC midnight: the horizon's rounding is then the same each day.
  const real = Date.now();
  const firstMidnight = real - (real % DAY_MS) + DAY_MS;
  for (let day = 1; day <= days + 1; day++) {
    clock.offset = firstMidnight + (day - 1) * DAY_MS + 3_600_000 - real;
    const daemon = await startOn(db, retainDays);
    try {
      if (day <= days) await loadDriver(daemon.url!, readFileSync(join(dir, 'token'), 'utf8').trim())(runsPerDay);
    } finally {
      // Its close waits for the round of retention its start began.
      await daemon.close();
    }
  }
  return { db, bytes: liveBytes(db), archives: archiveBytes(db), events: eventCount(db), restartS: Number.NaN };
}

/** Seconds from a start of the daemon on `db` (at the clock's time then) to a run submitted at once being done. */
async function restart(db: string, retainDays: number | undefined): Promise<number> {
  const started = performance.now();
  const daemon = await startOn(db, retainDays);
  try {
    await oneRun(daemon.url!, readFileSync(join(dirname(db), 'token'), 'utf8').trim());
    return (performance.now() - started) / 1000;
  } finally {
    await daemon.close();
  }
}

/** The embedded daemon on `db` at its soak's clock: a no-op agent, 8 slots; with `retainDays`, retention. */
function startOn(db: string, retainDays: number | undefined) {
  return startDaemon(
    {
      db,
      port: 0,
      exec: 'true',
      slots: 8,
      budgetNote: false,
      ...(retainDays !== undefined ? { retainDays } : {}),
    },
    { clock: clockOf.get(db)! },
  );
}

async function oneRun(url: string, token: string): Promise<void> {
  const submitted = await call(
    `${url}/v1/runs`,
    'POST',
    { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    '{"lane":"after","prompt":"hi"}',
  );
  const { run_id } = JSON.parse(submitted.text) as { run_id: string };
  for (;;) {
    const { text } = await call(`${url}/v1/runs/${run_id}`, 'GET');
    if (/"state":"(succeeded|failed|cancelled|resolved)"/.test(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function liveBytes(db: string): number {
  return ['', '-wal'].reduce((sum, suffix) => sum + (existsSync(db + suffix) ? statSync(db + suffix).size : 0), 0);
}

function archiveBytes(db: string): number {
  const folder = join(dirname(db), 'archive');
  return existsSync(folder) ? readdirSync(folder).reduce((sum, f) => sum + statSync(join(folder, f)).size, 0) : 0;
}

function eventCount(db: string): number {
  // The live rows only: the product's reader would read through the archives.
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite.prepare<[], number>('SELECT count(*) FROM events').pluck().get() ?? 0;
  } finally {
    sqlite.close();
  }
}

export interface RetentionFigures {
  readonly runsPerDay: number;
  readonly subject: SoakResult[];
  readonly baseline: SoakResult[];
}

export async function measureRetention(
  options: { quick?: boolean; rounds?: number } = {},
  log: (line: string) => void = () => {},
): Promise<RetentionFigures> {
  const runsPerDay = options.quick ? 100 : 300;
  // A round is two soaks of a few minutes: three rounds at most, whatever the run's --rounds.
  const rounds = Math.min(options.rounds ?? 3, 3);
  const figures: RetentionFigures = { runsPerDay, subject: [], baseline: [] };
  for (let round = 1; round <= rounds; round++) {
    const subject = await soak('retained', SOAK_DAYS, runsPerDay, RETAIN_DAYS);
    const baseline = await soak('two-days', RETAIN_DAYS, runsPerDay, undefined);
    // Alternated, so that a burst of load from elsewhere hits both alike.
    const times: [number[], number[]] = [[], []];
    for (let i = 0; i < RESTARTS; i++) {
      times[0].push(await restart(subject.db, RETAIN_DAYS));
      times[1].push(await restart(baseline.db, undefined));
    }
    subject.restartS = median(times[0]);
    baseline.restartS = median(times[1]);
    figures.subject.push(subject);
    figures.baseline.push(baseline);
    log(
      `round ${round}: ${SOAK_DAYS} days at --retain-days ${RETAIN_DAYS}: ${kb(subject.bytes)} live (${subject.events} rows), ${kb(subject.archives)} archived, ` +
        `restart ${subject.restartS.toFixed(2)} s; ${RETAIN_DAYS} days: ${kb(baseline.bytes)} (${baseline.events} rows), restart ${baseline.restartS.toFixed(2)} s`,
    );
  }
  return figures;
}

const kb = (bytes: number) => `${Math.round(bytes / 1024)} KB`;

export async function runRetentionBench(options: { quick?: boolean; rounds?: number } = {}, log?: (line: string) => void): Promise<Row[]> {
  const f = await measureRetention(options, log);
  const ratios = (pick: (s: SoakResult) => number) => f.subject.map((s, i) => pick(s) / pick(f.baseline[i]!));
  const size = median(ratios((s) => s.bytes));
  const restart = median(ratios((s) => s.restartS));
  const what = `${f.runsPerDay} runs a day, the embedded daemon restarted at each simulated midnight`;
  return [
    {
      benchmark: `retention: live log bytes after ${SOAK_DAYS} days at --retain-days ${RETAIN_DAYS} vs after ${RETAIN_DAYS} days (${what})`,
      subject: kb(median(f.subject.map((s) => s.bytes))),
      baseline: kb(median(f.baseline.map((s) => s.bytes))),
      ratio: size.toFixed(2),
      target: `≤ ${SIZE_TARGET}`,
      pass: size <= SIZE_TARGET,
      note: `file and WAL; ${kb(median(f.subject.map((s) => s.archives)))} in archive/ beside it; live rows ${median(f.subject.map((s) => s.events))} vs ${median(f.baseline.map((s) => s.events))}`,
    },
    {
      benchmark: `retention: restart to a run done on that log vs on the ${RETAIN_DAYS}-day one`,
      subject: `${median(f.subject.map((s) => s.restartS)).toFixed(2)} s`,
      baseline: `${median(f.baseline.map((s) => s.restartS)).toFixed(2)} s`,
      ratio: restart.toFixed(2),
      target: `≤ ${RESTART_TARGET}`,
      pass: restart <= RESTART_TARGET,
      note: 'the subject starts with --retain-days (its round finds nothing to cut)',
    },
  ];
}

export const retention: Benchmark = {
  name: 'retention',
  run: (options) => runRetentionBench({ quick: options.quick, rounds: options.rounds }, (line) => process.stderr.write(`  [retention] ${line}\n`)),
};

runIfMain(import.meta.url, async (argv) => {
  const at = argv.indexOf('--rounds');
  const rows = await runRetentionBench({ quick: argv.includes('--quick'), ...(at === -1 ? {} : { rounds: Number(argv[at + 1]) }) }, (line) =>
    process.stderr.write(`  ${line}\n`),
  );
  for (const row of rows)
    console.log(`${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: ${row.subject}, ${row.baseline}, ratio ${row.ratio}\n      ${row.note}`);
  return rows.every((r) => r.pass) ? 0 : 1;
});
