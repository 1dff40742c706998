/**
 * Every tool in time independent of log length (issue 16): `status` and `show RUN` against a board
 * serving the log, `audit RUN` for a run near the log's end and one near its start, and
 * `replay --run RUN`, each spawned through the CLI as a user runs it, on a log of a million events
 * (grown as bench/restartTime.ts grows one) against the same on a small log (the template itself).
 * The run near the end is one of today, submitted to the board serving the log and ended; the one near
 * the start is the log's first.
 *
 *   node --import tsx bench/toolsOnLargeLog.ts [--quick] [--events N]
 */
import { execFile } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { startDaemon } from '../apps/daemon/startDaemon.ts';
import { ensureBuilt } from '../build.ts';
import { call, startEmbedded } from './embeddedLoad.ts';
import { type Benchmark, benchDir, cleanUp, median, type Row, runIfMain } from './harness.ts';
import { grow } from './restartTime.ts';

const CLI = fileURLToPath(new URL('../cli/runledger.js', import.meta.url));
const TARGET = 1.5;

/**
 * Seconds from spawn to exit of `runledger ARGS` (async: the board may serve in this process); any
 * other failure than exit 1 with an answer on stdout fails the bench. `replay --run` on a grown log
 * exits 1: its copies' board decisions re-derive otherwise (the lanes' load differs), yet it read all it reads.
 */
function timed(args: readonly string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [CLI, ...args], { maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
      error && !(error.code === 1 && args[0] === 'replay' && stdout)
        ? reject(new Error(`runledger ${args.join(' ')} failed: ${stderr || error.message}`))
        : resolve((performance.now() - started) / 1000),
    ),
  );
}

/** The first run of the log. */
function firstRun(db: string): string {
  const sqlite = new Database(db, { readonly: true });
  try {
    return (sqlite.prepare(`SELECT stream FROM events WHERE stream LIKE 'run:%' ORDER BY seq LIMIT 1`).get() as { stream: string }).stream.slice(4);
  } finally {
    sqlite.close();
  }
}

/** A run of today: submitted to the board serving the log, waited for until it ends. */
async function runNow(url: string, db: string): Promise<string> {
  const token = readFileSync(join(db, '..', 'token'), 'utf8').trim();
  const submitted = await call(
    `${url}/v1/runs`,
    'POST',
    { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    '{"lane":"today","prompt":"hi"}',
  );
  const { run_id } = JSON.parse(submitted.text) as { run_id: string };
  for (;;) {
    const { text } = await call(`${url}/v1/runs/${run_id}`, 'GET');
    if (/"state":"(succeeded|failed|cancelled|resolved)"/.test(text)) return run_id;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

type Figures = Record<string, number>;

/** Each tool once untimed (the file cache), then `rounds` times; the medians. */
async function measure(db: string, rounds: number, log: (line: string) => void): Promise<Figures> {
  const first = firstRun(db);
  const daemon = await startDaemon({ db, port: 0, exec: 'true', slots: 8, budgetNote: false });
  try {
    const last = await runNow(daemon.url!, db);
    const tools: Record<string, string[]> = {
      status: ['status', '--server', daemon.url!, '--db', db],
      'show RUN': ['show', last, '--server', daemon.url!, '--db', db],
      'audit RUN (near the end)': ['audit', last, '--db', db],
      'audit RUN (near the start)': ['audit', first, '--db', db],
      'replay --run RUN': ['replay', '--run', last, '--db', db],
    };
    const out: Figures = {};
    for (const [name, args] of Object.entries(tools)) {
      await timed(args);
      const xs: number[] = [];
      for (let i = 0; i < rounds; i++) xs.push(await timed(args));
      out[name] = median(xs);
      log(`${name} on ${db}: ${out[name]!.toFixed(3)} s`);
    }
    return out;
  } finally {
    await daemon.close();
  }
}

export async function runToolsBench(
  options: { quick?: boolean; events?: number; rounds?: number } = {},
  log: (line: string) => void = () => {},
): Promise<Row[]> {
  await ensureBuilt();
  const target = options.events ?? (options.quick ? 100_000 : 1_000_000);
  const rounds = options.rounds ?? 3;
  const template = await startEmbedded('tools-template');
  await template.load(40);
  await template.close();
  const small = join(benchDir(), `tools-small-${Date.now()}`);
  const large = join(benchDir(), `tools-large-${Date.now()}`);
  cpSync(dirname(template.db), small, { recursive: true });
  cpSync(dirname(template.db), large, { recursive: true });
  const smallEvents = grow(join(small, 'runledger.db'), 1_000);
  const t = performance.now();
  const events = grow(join(large, 'runledger.db'), target);
  log(`logs of ${smallEvents} and ${events} events made in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  // One daemon start on each first, untimed, so its checkpoints are as a daemon that ran leaves them.
  for (const dir of [small, large]) await (await startDaemon({ db: join(dir, 'runledger.db'), port: 0, exec: 'true', budgetNote: false })).close();
  const s = await measure(join(small, 'runledger.db'), rounds, log);
  const l = await measure(join(large, 'runledger.db'), rounds, log);
  return Object.keys(s).map((tool) => {
    const ratio = l[tool]! / s[tool]!;
    log(`${tool}: ${l[tool]!.toFixed(3)} s vs ${s[tool]!.toFixed(3)} s`);
    return {
      benchmark: `tools: ${tool} on a ${Math.round(events / 1000)}k-event log vs a ${Math.round(smallEvents / 1000)}k one`,
      subject: `${l[tool]!.toFixed(2)} s`,
      baseline: `${s[tool]!.toFixed(2)} s`,
      ratio: ratio.toFixed(2),
      target: `≤ ${TARGET} or < 1 s`,
      pass: ratio <= TARGET || l[tool]! < 1,
      note: 'wall time from spawn to exit of the CLI, median',
    };
  });
}

export const toolsOnLargeLog: Benchmark = {
  name: 'toolsOnLargeLog',
  run: (options) => runToolsBench({ quick: options.quick }, (line) => process.stderr.write(`  [toolsOnLargeLog] ${line}\n`)),
};

runIfMain(import.meta.url, async (argv) => {
  const at = argv.indexOf('--events');
  try {
    const rows = await runToolsBench({ quick: argv.includes('--quick'), ...(at === -1 ? {} : { events: Number(argv[at + 1]) }) }, (line) =>
      process.stderr.write(`  ${line}\n`),
    );
    for (const row of rows) console.log(`${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: ${row.subject}, ${row.baseline}, ratio ${row.ratio}`);
    return rows.every((r) => r.pass) ? 0 : 1;
  } finally {
    cleanUp(); // its two logs are some 360 MB
  }
});
