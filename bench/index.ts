/**
 * `npm run bench [-- --quick] [-- --rounds N] [-- --only groupCommit,rebuild]`: each benchmark as a
 * ratio against a baseline measured in the same run (raw better-sqlite3, a small queue). Exits 1 when
 * a target is missed.
 */
import { cpus, loadavg } from 'node:os';
import { ensureBuilt } from '../build.ts';
import { appendBatched } from './appendBatched.ts';
import { appendSingle } from './appendSingle.ts';
import { crashRestart } from './crashRestart.ts';
import { dispatchScale } from './dispatchScale.ts';
import { embeddedThroughput } from './embeddedThroughput.ts';
import { eventsPerRun } from './eventsPerRun.ts';
import { groupCommit } from './groupCommit.ts';
import { type Benchmark, cleanUp, now, parseOptions, printTable, type Row } from './harness.ts';
import { idleCpu } from './idleCpu.ts';
import { liveViewDrain } from './liveViewDrain.ts';
import { memoryFlat } from './memoryFlat.ts';
import { postgresAppends } from './postgresAppends.ts';
import { rebuild } from './rebuild.ts';
import { replay } from './replay.ts';
import { restartTime } from './restartTime.ts';
import { retention } from './retention.ts';
import { scheduling } from './scheduling.ts';
import { startTime } from './startTime.ts';
import { toolsOnLargeLog } from './toolsOnLargeLog.ts';
import { wireLoad, wireLoadPostgres } from './wireLoad.ts';

const benchmarks: readonly Benchmark[] = [
  startTime,
  appendSingle,
  appendBatched,
  groupCommit,
  postgresAppends,
  rebuild,
  scheduling,
  wireLoad,
  wireLoadPostgres,
  dispatchScale,
  replay,
  memoryFlat,
  restartTime,
  retention,
  crashRestart,
  idleCpu,
  toolsOnLargeLog,
  eventsPerRun,
  embeddedThroughput,
  liveViewDrain,
];

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const chosen = benchmarks.filter((b) => options.only.length === 0 || options.only.some((o) => b.name.toLowerCase().includes(o.toLowerCase())));
  if (chosen.length === 0) throw new Error(`no benchmark matches ${options.only.join(', ')}`);
  const started = now();
  const loadBefore = loadavg()[0]!;
  process.stderr.write(
    `runledger bench: ${options.quick ? 'quick' : 'full'}, ${options.rounds} rounds each, node ${process.version}, ` +
      `${cpus().length} CPUs, load average ${loadBefore.toFixed(2)}` +
      `${(globalThis as { gc?: unknown }).gc ? '' : ' (no --expose-gc: rounds are not preceded by a GC)'}\n`,
  );
  // wireLoad and startTime spawn the CLI, which runs the built files: they must be the sources'.
  if (await ensureBuilt()) process.stderr.write('built dist/ (it did not match the sources)\n');
  const rows: Row[] = [];
  try {
    for (const b of chosen) {
      const t = now();
      process.stderr.write(`${b.name}…\n`);
      rows.push(...(await b.run(options)));
      process.stderr.write(`${b.name} done in ${(now() - t).toFixed(1)} s\n`);
    }
  } finally {
    cleanUp();
  }
  console.log('');
  printTable(rows);
  const failed = rows.filter((r) => !r.pass);
  console.log(
    `\n${rows.length - failed.length}/${rows.length} targets met in ${(now() - started).toFixed(0)} s` +
      `${options.quick ? ' (quick run: sizes are smaller, figures are indicative only)' : ''}`,
  );
  console.log(
    `1-minute load average: ${loadBefore.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end, on ${cpus().length} CPUs` +
      ' (other processes competing for the CPUs widen the spread of the ratios)',
  );
  return failed.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    cleanUp();
    console.error(error);
    process.exit(2);
  },
);
