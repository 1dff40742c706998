/**
 * A crash restart in time independent of the log and of the work since the last checkpoint, and memory
 * flat across lives (issue 25). The embedded daemon runs as a real process (`runledger daemon --exec
 * true`, the board's default `--sync full`, 8 slots, 40 lanes): life 1 runs 500 runs and is SIGKILLed
 * once idle; life 2 runs 3,000 more and is SIGKILLed once idle. Points: restarts of copies of the folder
 * as each crash left it (3,500-run log vs 500-run one), each timed from its spawn until a run submitted
 * at once is done, medians of 3; and the RSS after life 1's 500 runs vs after life 2's 3,000.
 *
 *   node --import tsx bench/crashRestart.ts [--quick]
 */
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killLife, loadUntilIdle, spawnDaemon } from './daemonProcess.ts';
import { type Benchmark, benchDir, median, type Row, runIfMain } from './harness.ts';

const DAEMON_ARGS = ['--exec', 'true', '--slots', '8', '--budget-note', 'off'];
const TIME_TARGET = 1.5;
const MEMORY_TARGET_MB = 25;

function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

export interface CrashFigures {
  readonly runs: readonly [number, number];
  readonly restartS: readonly [number, number];
  readonly rssMb: readonly [number, number];
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
  const life1 = await spawnDaemon(db, DAEMON_ARGS);
  await loadUntilIdle(life1, first);
  // Idle a moment so that the RSS is that of a daemon at rest, as after the other life's runs.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const rss1 = rssMb(life1.child.pid!);
  log(`life 1: ${first + 1} runs, RSS ${rss1.toFixed(0)} MB; SIGKILL`);
  await killLife(life1);
  // The folder as the crash left it, to restart copies of it in the timed rounds.
  const small = `${dir}-small`;
  cpSync(dir, small, { recursive: true });
  const life2 = await spawnDaemon(db, DAEMON_ARGS);
  await loadUntilIdle(life2, more);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const rss2 = rssMb(life2.child.pid!);
  log(`life 2: ${more + 1} more runs, RSS ${rss2.toFixed(0)} MB; SIGKILL`);
  await killLife(life2);
  const s: number[] = [];
  const l: number[] = [];
  for (let round = 0; round < (options.rounds ?? 3); round++) {
    s.push(await restartOnCopy(small, round));
    l.push(await restartOnCopy(dir, round));
    log(`round ${round + 1}: a run done ${l.at(-1)!.toFixed(2)} s after the spawn on the large log, ${s.at(-1)!.toFixed(2)} s on the small one`);
  }
  return { runs: [first, first + more], restartS: [median(s), median(l)], rssMb: [rss1, rss2] };
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
      note: 'each read from /proc once the daemon idled 1 s after its runs',
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
