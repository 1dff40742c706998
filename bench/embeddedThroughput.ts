/**
 * The embedded daemon end to end against bare spawning (issues 16, 25), two rows, each in rounds that
 * alternate the two sides, `--sync full`, 8 slots, runs submitted over HTTP over 40 lanes:
 * - in this process: `startDaemon` with a no-op agent `true`, against spawning `/bin/sh -c true`;
 * - as a user runs it: the CLI's `runledger daemon` in a process of its own, with an agent that reads
 *   its prompt and replies (`sh -c 'cat >/dev/null; echo ok'`), against spawning that agent with the
 *   prompt on its stdin and its reply read.
 * Target: ≥ 0.5 of bare spawning in both.
 *
 *   node --expose-gc --import tsx bench/embeddedThroughput.ts [--quick] [--cpu-prof]
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { killLife, loadUntilIdle, spawnDaemon } from './daemonProcess.ts';
import { startEmbedded } from './embeddedLoad.ts';
import { type Benchmark, benchDir, paired, progress, type Row, ratioRow, runIfMain } from './harness.ts';

const SLOTS = 8;
const TARGET = 0.5;

/** The agent that reads its prompt and replies, as a shell command line. */
const REPLYING = 'cat >/dev/null; echo ok';

/** Runs/s of `runs` bare spawns of the agent (`script`, run by /bin/sh), `SLOTS` at a time. */
async function bareSpawns(runs: number, script = 'true'): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: SLOTS }, async () => {
      while (next++ < runs) {
        await new Promise<void>((resolve, reject) => {
          const child = spawn('/bin/sh', ['-c', script], { stdio: ['pipe', 'pipe', 'pipe'] });
          // `true` never reads it: a write to its closed stdin is no failure of the run.
          child.stdin.on('error', () => {});
          child.stdin.end('prompt');
          child.stdout.resume();
          child.stderr.resume();
          child.on('error', reject);
          child.on('close', () => resolve());
        });
      }
    }),
  );
  return runs / ((performance.now() - started) / 1000);
}

export async function runThroughputBench(options: { quick?: boolean; rounds?: number } = {}, log?: (line: string) => void): Promise<Row[]> {
  const runs = options.quick ? 300 : 1_000;
  const embedded = await startEmbedded('throughput', { slots: SLOTS });
  try {
    await embedded.load(100);
    const p = await paired(
      options.rounds ?? (options.quick ? 2 : 3),
      async () => runs / (await embedded.load(runs)),
      () => bareSpawns(runs),
      log,
      { subject: () => embedded.load(50), baseline: () => bareSpawns(50) },
    );
    return [
      ratioRow(
        `embedded daemon in this process: runs/s vs bare spawn, ${SLOTS} at a time`,
        'runs/s',
        p,
        TARGET,
        `${runs} runs a round of a no-op agent over 40 lanes, --sync full; its computer calls the board in the process`,
      ),
      await throughCli(runs, options.rounds ?? (options.quick ? 2 : 3), log),
    ];
  } finally {
    await embedded.close();
  }
}

/** The second row: the CLI's daemon in its own process, with the replying agent. */
async function throughCli(runs: number, rounds: number, log?: (line: string) => void): Promise<Row> {
  const dir = join(benchDir(), `throughput-cli-${process.hrtime.bigint()}`);
  mkdirSync(dir, { recursive: true });
  const life = await spawnDaemon(join(dir, 'runledger.db'), ['--exec', `sh -c '${REPLYING}'`, '--slots', String(SLOTS), '--budget-note', 'off']);
  try {
    await loadUntilIdle(life, 100);
    const p = await paired(
      rounds,
      async () => {
        const started = performance.now();
        await loadUntilIdle(life, runs);
        return runs / ((performance.now() - started) / 1000);
      },
      () => bareSpawns(runs, REPLYING),
      log,
    );
    return ratioRow(
      `runledger daemon (its own process) with a replying agent: runs/s vs bare spawn, ${SLOTS} at a time`,
      'runs/s',
      p,
      TARGET,
      `${runs} runs a round over 40 lanes, --sync full; the agent: sh -c '${REPLYING}'`,
    );
  } finally {
    await killLife(life, 'SIGTERM');
  }
}

export const embeddedThroughput: Benchmark = {
  name: 'embeddedThroughput',
  run: (options) => runThroughputBench({ quick: options.quick, rounds: options.rounds }, progress('embeddedThroughput')),
};

runIfMain(import.meta.url, async (argv) => {
  const rows = await runThroughputBench({ quick: argv.includes('--quick') }, (line) => process.stderr.write(`  ${line}\n`));
  for (const row of rows) console.log(`${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: ${row.subject} vs ${row.baseline}, ratio ${row.ratio}`);
  return rows.every((r) => r.pass) ? 0 : 1;
});
