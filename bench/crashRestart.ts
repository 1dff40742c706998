/**
 * A crash restart in time independent of the log and of the work since the last checkpoint, and memory
 * flat across lives (issue 25). The embedded daemon runs as a real process (`runledger daemon --exec
 * true`, the board's default `--sync full`, 8 slots, 40 lanes): life 1 runs 500 runs and is SIGKILLed
 * once idle; life 2 is timed from its spawn until a run submitted at once is done, runs 3,000 more and
 * is SIGKILLed once idle; life 3 is timed the same. Points: the two timed restarts (3,500-run log vs
 * 500-run one), and the RSS after life 1's 500 runs vs after life 2's 3,000.
 *
 *   node --import tsx bench/crashRestart.ts [--quick]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, loadDriver } from './embeddedLoad.ts';
import { type Benchmark, benchDir, type Row, runIfMain } from './harness.ts';

const MAIN = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const TIME_TARGET = 1.5;
const MEMORY_TARGET_MB = 25;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Life {
  readonly child: ChildProcess;
  readonly url: string;
  readonly token: string;
  /** Seconds from the spawn until a run submitted as soon as the board answered was done. */
  readonly firstRunDone: number;
}

/** Spawns a daemon's life on `db` and times it until a first run is done. */
async function startLife(db: string): Promise<Life> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [MAIN, 'daemon', '--db', db, '--port', String(port), '--exec', 'true', '--slots', '8', '--budget-note', 'off'],
    {
      // Its narration beside the log, for a look when a life is slow.
      stdio: ['ignore', openSync(`${db}.life-${Date.now()}.log`, 'w'), 'inherit'],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  let token = '';
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the daemon exited ${child.exitCode} before it served`);
    if (Date.now() > deadline) throw new Error('the daemon did not serve within 60 s');
    try {
      token ||= readFileSync(join(db, '..', 'token'), 'utf8').trim();
      const submitted = await call(
        `${url}/v1/runs`,
        'POST',
        { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        '{"lane":"first","prompt":"hi"}',
      );
      if (submitted.status === 201) {
        const { run_id } = JSON.parse(submitted.text) as { run_id: string };
        for (;;) {
          const { text } = await call(`${url}/v1/runs/${run_id}`, 'GET');
          if (/"state":"(succeeded|failed|cancelled|resolved)"/.test(text)) break;
          if (Date.now() > deadline) throw new Error('the first run was not done within 60 s');
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        return { child, url, token, firstRunDone: (performance.now() - started) / 1000 };
      }
    } catch (error) {
      if (error instanceof Error && /within 60 s/.test(error.message)) throw error;
      // Not serving yet (no token file, connection refused).
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/**
 * Runs `runs` more and waits until no run of the board is left unfinished (the load driver counts the
 * terminal runs of the whole log against what it submitted itself, so a later life's would end early).
 */
async function load(life: Life, runs: number): Promise<void> {
  await loadDriver(life.url, life.token)(runs);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { text } = await call(`${life.url}/metrics`, 'GET');
    const open = [...text.matchAll(/^runledger_runs\{state="(queued|claimed|running)"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[2]), 0);
    if (open === 0) return;
    if (Date.now() > deadline) throw new Error(`${open} runs still unfinished after 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function kill(life: Life): Promise<void> {
  const exited = new Promise((resolve) => life.child.once('exit', resolve));
  life.child.kill('SIGKILL');
  await exited;
}

export interface CrashFigures {
  readonly runs: readonly [number, number];
  readonly restartS: readonly [number, number];
  readonly rssMb: readonly [number, number];
}

export async function measureCrashRestart(options: { quick?: boolean } = {}, log: (line: string) => void = () => {}): Promise<CrashFigures> {
  const [first, more] = options.quick ? [200, 1_000] : [500, 3_000];
  const dir = join(benchDir(), `crash-${process.hrtime.bigint()}`);
  mkdirSync(dir, { recursive: true });
  const db = join(dir, 'runledger.db');
  const life1 = await startLife(db);
  await load(life1, first);
  // Idle a moment so that the RSS is that of a daemon at rest, as after the other life's runs.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const rss1 = rssMb(life1.child.pid!);
  log(`life 1: ${first + 1} runs, RSS ${rss1.toFixed(0)} MB; SIGKILL`);
  await kill(life1);
  const life2 = await startLife(db);
  log(`life 2: first run done ${life2.firstRunDone.toFixed(2)} s after its spawn`);
  await load(life2, more);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const rss2 = rssMb(life2.child.pid!);
  log(`life 2: ${more + 1} runs, RSS ${rss2.toFixed(0)} MB; SIGKILL`);
  await kill(life2);
  const life3 = await startLife(db);
  log(`life 3: first run done ${life3.firstRunDone.toFixed(2)} s after its spawn`);
  await kill(life3);
  return { runs: [first, first + more], restartS: [life2.firstRunDone, life3.firstRunDone], rssMb: [rss1, rss2] };
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
      note: 'one life each (a process spawned, its node start included)',
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
