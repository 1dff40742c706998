/**
 * A crash restart in time independent of the log and of the work since the last checkpoint, and memory
 * flat across lives (issue 25). The embedded daemon runs as a real process (`runledger daemon --exec
 * true`, the board's default `--sync full`, 8 slots, 40 lanes): life 1 runs 500 runs and is SIGKILLed
 * once idle; life 2 runs 3,000 more and is SIGKILLed once idle. Points: restarts of copies of the folder
 * as each crash left it (3,500-run log vs 500-run one), each timed from its spawn until a run submitted
 * at once is done, medians of 3; and the RSS after life 1's 500 runs vs after life 2's 3,000, both in
 * batches of 500 and read at rest (see loadThenRss).
 *
 *   node --import tsx bench/crashRestart.ts [--quick]
 */
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DaemonLife, killLife, loadUntilIdle, spawnDaemon } from './daemonProcess.ts';
import { type Benchmark, benchDir, median, type Row, runIfMain } from './harness.ts';

const DAEMON_ARGS = ['--exec', 'true', '--slots', '8', '--budget-note', 'off'];
const TIME_TARGET = 1.5;
const MEMORY_TARGET_MB = 25;

/**
 * The runs are submitted this many at a time, each batch once the last is done: every point is read
 * after the same load, so what grows between them is what the daemon keeps, not the peak of a longer
 * backlog (3,000 runs submitted at once queue six times as many as 500, and the heap and the allocator
 * keep the pages such a peak touched).
 */
const BATCH = 500;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a daemon at rest is given for V8 to give back the heap its load grew. */
const REST_LIMIT_MS = 150_000;

/** The collections V8 made to give memory back (its memory reducer), as --trace-gc tells them. */
const reductions = (life: DaemonLife) => readFileSync(life.narration, 'utf8').split('(reduce)').length - 1;

/**
 * `runs` more runs, BATCH at a time; then the RSS a second after the last, and once the daemon is at
 * rest: V8 gives back the heap a load grew (its memory reducer: full collections once the allocations
 * stopped, seen in --trace-gc) tens of seconds after it, and until then the heap holds the garbage of the
 * last batches, up to a limit several times what is alive (tens of MB either way at any given moment).
 * At rest is what the points compare: what the daemon keeps.
 */
async function loadThenRss(life: DaemonLife, runs: number): Promise<{ raw: number; rest: number; restS: number; parts: string }> {
  for (let done = 0; done < runs; done += BATCH) await loadUntilIdle(life, Math.min(BATCH, runs - done));
  await pause(1_000);
  const raw = rssMb(life.child.pid!);
  const before = reductions(life);
  const from = performance.now();
  while (reductions(life) === before && performance.now() - from < REST_LIMIT_MS) await pause(1_000);
  // Its last collection done and the pages it freed handed back.
  await pause(2_000);
  return { raw, rest: rssMb(life.child.pid!), restS: (performance.now() - from) / 1000, parts: rssParts(life.child.pid!) };
}

/** The parts of the RSS (anonymous, file-backed, shared memory: SQLite's WAL index), for the log. */
function rssParts(pid: number): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (name: string) => (Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1]) / 1024).toFixed(0);
  return `anonymous ${mb('RssAnon')} MB, files ${mb('RssFile')} MB, shared ${mb('RssShmem')} MB`;
}

function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

export interface CrashFigures {
  readonly runs: readonly [number, number];
  readonly restartS: readonly [number, number];
  /** At rest, once V8 gave back what the load grew: what the points compare. */
  readonly rssMb: readonly [number, number];
  /** A second after the runs: for the note. */
  readonly rawRssMb: readonly [number, number];
  /** Seconds until at rest. */
  readonly restS: readonly [number, number];
}

/** Seconds from the spawn to a first run done, of a daemon started on a copy of the crashed folder `from` (medians of rounds). */
async function restartOnCopy(from: string, round: number): Promise<number> {
  const copy = `${from}-round-${round}`;
  cpSync(from, copy, { recursive: true });
  const life = await spawnDaemon(join(copy, 'runledger.db'), DAEMON_ARGS);
  await killLife(life);
  return life.firstRunDone;
}

export async function measureCrashRestart(
  options: { quick?: boolean; rounds?: number } = {},
  log: (line: string) => void = () => {},
): Promise<CrashFigures> {
  const [first, more] = options.quick ? [200, 1_000] : [500, 3_000];
  const dir = join(benchDir(), `crash-${process.hrtime.bigint()}`);
  mkdirSync(dir, { recursive: true });
  const db = join(dir, 'runledger.db');
  const life1 = await spawnDaemon(db, DAEMON_ARGS, { traceGc: true });
  const rss1 = await loadThenRss(life1, first);
  log(
    `life 1: ${first + 1} runs, RSS ${rss1.raw.toFixed(0)} MB, at rest ${rss1.rest.toFixed(0)} MB after ${rss1.restS.toFixed(0)} s (${rss1.parts}); SIGKILL`,
  );
  await killLife(life1);
  // The folder as the crash left it, to restart copies of it in the timed rounds.
  const small = `${dir}-small`;
  cpSync(dir, small, { recursive: true });
  const life2 = await spawnDaemon(db, DAEMON_ARGS, { traceGc: true });
  const rss2 = await loadThenRss(life2, more);
  log(
    `life 2: ${more + 1} more runs, RSS ${rss2.raw.toFixed(0)} MB, at rest ${rss2.rest.toFixed(0)} MB after ${rss2.restS.toFixed(0)} s (${rss2.parts}); SIGKILL`,
  );
  await killLife(life2);
  const s: number[] = [];
  const l: number[] = [];
  for (let round = 0; round < (options.rounds ?? 3); round++) {
    s.push(await restartOnCopy(small, round));
    l.push(await restartOnCopy(dir, round));
    log(`round ${round + 1}: a run done ${l.at(-1)!.toFixed(2)} s after the spawn on the large log, ${s.at(-1)!.toFixed(2)} s on the small one`);
  }
  return {
    runs: [first, first + more],
    restartS: [median(s), median(l)],
    rssMb: [rss1.rest, rss2.rest],
    rawRssMb: [rss1.raw, rss2.raw],
    restS: [rss1.restS, rss2.restS],
  };
}

export async function runCrashRestartBench(options: { quick?: boolean } = {}, log?: (line: string) => void): Promise<Row[]> {
  const f = await measureCrashRestart(options, log);
  const ratio = f.restartS[1] / f.restartS[0];
  const growth = f.rssMb[1] - f.rssMb[0];
  return [
    {
      benchmark: `crash restart: daemon SIGKILLed idle on a ${f.runs[1]}-run log vs a ${f.runs[0]}-run one (process, --sync full)`,
      subject: `${f.restartS[1].toFixed(2)} s spawn to a run done`,
      baseline: `${f.restartS[0].toFixed(2)} s`,
      ratio: ratio.toFixed(2),
      target: `≤ ${TIME_TARGET} and < 1 s`,
      pass: ratio <= TIME_TARGET && f.restartS[1] < 1,
      note: 'medians of 3 restarts of copies of each crashed folder (a process spawned, its node start included)',
    },
    {
      benchmark: `memory across a crash: RSS after ${f.runs[1] - f.runs[0]} runs of the next life vs after the first ${f.runs[0]}`,
      subject: `RSS +${growth.toFixed(1)} MB`,
      baseline: `${f.rssMb[0].toFixed(0)} MB`,
      ratio: `${(f.rssMb[1] / f.rssMb[0]).toFixed(2)}`,
      target: `≤ +${MEMORY_TARGET_MB} MB`,
      pass: growth <= MEMORY_TARGET_MB,
      note: `runs in batches of ${BATCH}; each read from /proc at rest (V8's memory-reducing collections done, ${f.restS[0].toFixed(0)} s and ${f.restS[1].toFixed(0)} s after the runs; --trace-gc); a second after the runs ${f.rawRssMb[0].toFixed(0)} → ${f.rawRssMb[1].toFixed(0)} MB`,
    },
  ];
}

export const crashRestart: Benchmark = {
  name: 'crashRestart',
  run: (options) => runCrashRestartBench({ quick: options.quick }, (line) => process.stderr.write(`  [crashRestart] ${line}\n`)),
};

runIfMain(import.meta.url, async (argv) => {
  const rows = await runCrashRestartBench({ quick: argv.includes('--quick') }, (line) => process.stderr.write(`  ${line}\n`));
  for (const row of rows)
    console.log(`${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: ${row.subject}, ${row.baseline}, ratio ${row.ratio}\n      ${row.note}`);
  return rows.every((r) => r.pass) ? 0 : 1;
});
