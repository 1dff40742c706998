/**
 * A crash restart in time independent of the log and of the work since the last checkpoint, and memory
 * flat across lives (issue 25). The embedded daemon runs as a real process (`runledger daemon --exec
 * true`, the board's default `--sync full`, 8 slots, 40 lanes): life 1 runs 500 runs and is SIGKILLed
 * once idle; life 2 runs 3,000 more and is SIGKILLed once idle. Points: restarts of copies of the folder
 * as each crash left it (3,500-run log vs 500-run one), each timed from its spawn until a run submitted
 * at once is done, medians of 3; and the RSS after life 1's 500 runs vs after life 2's 3,000, both in
 * batches of 500 and read after a full collection (see loadThenRss).
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

/**
 * `runs` more runs, BATCH at a time; then, a second after the last, the RSS as it stands and once the
 * daemon collected its garbage (SIGUSR2, bench/collectOnSignal.mjs): the point compared is the latter.
 */
async function loadThenRss(life: DaemonLife, runs: number): Promise<{ raw: number; kept: number; parts: string }> {
  for (let done = 0; done < runs; done += BATCH) await loadUntilIdle(life, Math.min(BATCH, runs - done));
  await pause(1_000);
  const raw = rssMb(life.child.pid!);
  life.child.kill('SIGUSR2');
  await pause(1_000);
  return { raw, kept: rssMb(life.child.pid!), parts: rssParts(life.child.pid!) };
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
  /** Once the daemon collected its garbage: what the points compare. */
  readonly rssMb: readonly [number, number];
  /** As it stood a second after the runs, before that collection: for the note. */
  readonly rawRssMb: readonly [number, number];
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
  const life1 = await spawnDaemon(db, DAEMON_ARGS, { collectOnSignal: true });
  const rss1 = await loadThenRss(life1, first);
  log(`life 1: ${first + 1} runs, RSS ${rss1.raw.toFixed(0)} MB, ${rss1.kept.toFixed(0)} MB collected (${rss1.parts}); SIGKILL`);
  await killLife(life1);
  // The folder as the crash left it, to restart copies of it in the timed rounds.
  const small = `${dir}-small`;
  cpSync(dir, small, { recursive: true });
  const life2 = await spawnDaemon(db, DAEMON_ARGS, { collectOnSignal: true });
  const rss2 = await loadThenRss(life2, more);
  log(`life 2: ${more + 1} more runs, RSS ${rss2.raw.toFixed(0)} MB, ${rss2.kept.toFixed(0)} MB collected (${rss2.parts}); SIGKILL`);
  await killLife(life2);
  const s: number[] = [];
  const l: number[] = [];
  for (let round = 0; round < (options.rounds ?? 3); round++) {
    s.push(await restartOnCopy(small, round));
    l.push(await restartOnCopy(dir, round));
    log(`round ${round + 1}: a run done ${l.at(-1)!.toFixed(2)} s after the spawn on the large log, ${s.at(-1)!.toFixed(2)} s on the small one`);
  }
  return { runs: [first, first + more], restartS: [median(s), median(l)], rssMb: [rss1.kept, rss2.kept], rawRssMb: [rss1.raw, rss2.raw] };
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
      note: `runs in batches of ${BATCH}; each read from /proc after a full collection (node --expose-gc, on SIGUSR2) 1 s after its last batch; before it ${f.rawRssMb[0].toFixed(0)} → ${f.rawRssMb[1].toFixed(0)} MB`,
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
