/**
 * The embedded daemon end to end against bare spawning (issue 16): runs/s of `runledger daemon` (board
 * and computer in this process, `--slots 8`, a no-op agent `true`, runs submitted over HTTP over 40
 * lanes) against spawning `/bin/sh -c true` directly, 8 at a time, in rounds that alternate the two.
 * Target: ≥ 0.5 of bare spawning.
 *
 *   node --expose-gc --import tsx bench/embeddedThroughput.ts [--quick] [--cpu-prof]
 */
import { spawn } from 'node:child_process';
import { startEmbedded } from './embeddedLoad.ts';
import { type Benchmark, paired, progress, type Row, ratioRow, runIfMain } from './harness.ts';

const SLOTS = 8;
const TARGET = 0.5;

/** Runs/s of `runs` bare spawns of the agent, `SLOTS` at a time. */
async function bareSpawns(runs: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: SLOTS }, async () => {
      while (next++ < runs) {
        await new Promise<void>((resolve, reject) => {
          const child = spawn('/bin/sh', ['-c', 'true'], { stdio: ['pipe', 'pipe', 'pipe'] });
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
        `embedded daemon: runs/s vs bare spawn, ${SLOTS} at a time`,
        'runs/s',
        p,
        TARGET,
        `${runs} runs a round of a no-op agent over 40 lanes`,
      ),
    ];
  } finally {
    await embedded.close();
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
