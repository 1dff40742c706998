/**
 * How soon `runledger` is ready (issue 15: `--help`, `--version` and `status` within 3x a bare
 * `node -e 0`): each command's wall time from spawn to exit, against `node -e 0` spawned alternately
 * in the same run, judged on the median of the per-round ratios. `status` asks a port where no board
 * listens, so it loads and runs everything a status does up to the connection, and fails at once.
 *
 *   npx tsx bench/startTime.ts [--quick]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../build.ts';
import { type Benchmark, formatRatio, median, now, paired, progress, type Row, runIfMain } from './harness.ts';

const CLI = fileURLToPath(new URL('../cli/runledger.js', import.meta.url));
const TARGET = 3;

const subjects: readonly { readonly label: string; readonly args: readonly string[]; readonly exit: number }[] = [
  { label: '--help', args: ['--help'], exit: 0 },
  { label: '--version', args: ['--version'], exit: 0 },
  { label: 'status', args: ['status', '--server', 'http://127.0.0.1:9'], exit: 2 },
];

/** Milliseconds from spawn to exit of `node ARGS`; a wrong exit status fails the bench (it measured something else). */
function spawnMs(args: readonly string[], exit: number): number {
  const started = now();
  const result = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = (now() - started) * 1000;
  if (result.status !== exit) throw new Error(`node ${args.join(' ')} exited ${result.status}, not ${exit}: ${result.stderr}`);
  return ms;
}

export async function runStartTimeBench(rounds: number, log: (line: string) => void): Promise<Row[]> {
  await ensureBuilt();
  const rows: Row[] = [];
  for (const s of subjects) {
    spawnMs([CLI, ...s.args], s.exit); // untimed: the first start also warms the file cache
    const p = await paired(
      rounds,
      async () => spawnMs([CLI, ...s.args], s.exit),
      async () => spawnMs(['-e', '0'], 0),
    );
    const ratio = median(p.ratios);
    log(`${s.label}: ${median(p.subject).toFixed(0)} ms, node -e 0 ${median(p.baseline).toFixed(0)} ms, ratio ${formatRatio(ratio)}`);
    rows.push({
      benchmark: `startTime ${s.label}`,
      subject: `${median(p.subject).toFixed(0)} ms`,
      baseline: `${median(p.baseline).toFixed(0)} ms (node -e 0)`,
      ratio: `${formatRatio(ratio)} (${formatRatio(Math.min(...p.ratios))}–${formatRatio(Math.max(...p.ratios))})`,
      target: `≤ ${formatRatio(TARGET)}`,
      pass: ratio <= TARGET,
    });
  }
  return rows;
}

export const startTime: Benchmark = {
  name: 'startTime',
  run: (options) => runStartTimeBench(options.quick ? 7 : 21, progress('startTime')),
};

runIfMain(import.meta.url, async (argv) => {
  const rows = await runStartTimeBench(argv.includes('--quick') ? 7 : 21, progress('startTime'));
  for (const r of rows)
    console.log(`${r.pass ? 'PASS' : 'FAIL'}  ${r.benchmark}: ${r.subject}, ${r.baseline}, ratio ${r.ratio} (target ${r.target})`);
  return rows.every((r) => r.pass) ? 0 : 1;
});
