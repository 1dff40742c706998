/**
 * The wire under load, end to end on loopback: a real board (`runledger server`, a process of its
 * own) and two real computers (`runledger daemon --server … --slots 8`, a no-op agent), 2,000 runs
 * over 200 lanes submitted concurrently over HTTP with the submit token. Measured: runs/s from the
 * first submit to the last terminal run, and the submit→claim latency (the board's
 * `board.run.claimed` `at` against the moment the client sent the submit). Target: ≥ 200 runs/s.
 *
 *   npx tsx bench/wireLoad.ts [--quick] [--board-sync full|normal] [--cpu-prof]
 *
 * The computers run with `--sync normal` (a crash, not a power cut, is what they must survive in a
 * bench); the board keeps its default `full` unless `--board-sync normal` is given. `--cpu-prof`
 * writes CPU profiles of the board and of each computer (`.cpuprofile`, for Chrome DevTools) under
 * the folder it prints; `WIRELOAD_KEEP=1` keeps the three logs for a look with `sqlite3`.
 *
 * Besides the rate, it reports the CPU each process spent a run (from /proc): on a shared machine the
 * wall-clock rate swings with the load of others, the CPU a run much less, and it says which process
 * would cap the rate on an idle one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ensureBuilt } from '../build.ts';
import { createSchemaLog } from '../runtime/store/postgres/schemaLog.ts';
import { startPostgresCluster } from '../test/support/postgresCluster.ts';
import { type Benchmark, type Row, runIfMain } from './harness.ts';
import { callWith } from './httpCall.ts';

const CLI = fileURLToPath(new URL('../cli/runledger.js', import.meta.url));
const TARGET_RUNS_PER_S = 200;
const TERMINAL = ['succeeded', 'failed', 'cancelled', 'resolved'] as const;

export interface WireLoadOptions {
  readonly quick?: boolean;
  readonly runs?: number;
  readonly lanes?: number;
  /** Submits in flight at once. */
  readonly concurrency?: number;
  readonly slots?: number;
  readonly boardSync?: 'full' | 'normal';
  /** A folder for the board's CPU profile, or null for none. */
  readonly cpuProfDir?: string | null;
  /** Every run's budget: a run that waits longer to be claimed is not what is measured. */
  readonly timeoutMs?: number;
  /**
   * A PostgreSQL log (`postgres://…`, a fresh one): two boards on it instead of one on SQLite, each
   * computer on one (`--server` naming both), the submits shared between them (docs/rules.md#postgresql-board).
   */
  readonly postgres?: string;
}

export interface WireLoadFigures {
  readonly runs: number;
  readonly lanes: number;
  readonly seconds: number;
  readonly runsPerS: number;
  readonly submitSeconds: number;
  readonly claimP50Ms: number;
  readonly claimP99Ms: number;
  readonly claimMaxMs: number;
  readonly states: Record<string, number>;
  /** conversation_busy answers the board gave (each a park on some computer). */
  readonly busy: number;
  /** Claims refused because another computer had the run: work both computers did for one run. */
  readonly claimedElsewhere: number;
  readonly boardEvents: number;
  /**
   * CPU ms a run (user + sys, from /proc) while the load ran: the board, the computers, and their
   * children (each computer's agent launcher and the agents it forked). On a shared machine this is steadier than wall time, and says which process
   * would cap the rate once the others got out of its way.
   */
  readonly cpuMsPerRun: { readonly board: number; readonly computers: number; readonly agents: number; readonly client: number } | null;
}

class Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  out = '';
  err = '';

  constructor(args: readonly string[], nodeArgs: readonly string[] = []) {
    this.child = spawn(process.execPath, [...nodeArgs, CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (c: string) => (this.out = (this.out + c).slice(-20_000)));
    this.child.stderr!.setEncoding('utf8').on('data', (c: string) => (this.err = (this.err + c).slice(-20_000)));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  async waitFor(pattern: RegExp, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pattern.test(this.out)) {
      if (this.child.exitCode !== null) throw new Error(`runledger exited first:\n${this.out}\n${this.err}`);
      if (Date.now() > deadline) throw new Error(`no "${pattern.source}" within ${ms} ms:\n${this.out}\n${this.err}`);
      await sleep(50);
    }
  }

  async stop(ms = 20_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), ms);
    await this.exited;
    clearTimeout(timer);
  }
}

/** utime+stime of a process and of its waited-for children, in ms (null where /proc is not there). */
function cpuMs(pid: number | undefined): { self: number; children: number } | null {
  const own = statTicks(pid);
  if (own === null) return null;
  // Live children (the agent launcher, agents still running) count with the reaped ones: cutime only
  // holds children that have been waited for.
  let live = 0;
  try {
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean)) {
      const ticks = statTicks(Number(child));
      if (ticks) live += ticks.self + ticks.children;
    }
  } catch {
    // No children file on this kernel: reaped children only.
  }
  return { self: own.self, children: own.children + live };
}

function statTicks(pid: number | undefined): { self: number; children: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    // Fields 14-17 of stat(5), counted from the state (field 3) here: utime, stime, cutime, cstime, in ticks of 10 ms.
    return { self: (fields[11]! + fields[12]!) * 10, children: (fields[13]! + fields[14]!) * 10 };
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function computerToken(db: string, id: string): Promise<string> {
  const add = new Proc(['computer', 'add', id, '--db', db, '--json']);
  if ((await add.exited) !== 0) throw new Error(`computer add ${id} failed: ${add.err}`);
  return (JSON.parse(add.out) as { token: string }).token;
}

/**
 * The load generator shares the two CPUs with what it measures, so it talks over node's own client on
 * kept-alive connections: fetch spends several times the CPU a call.
 */
const call = callWith(new Agent({ keepAlive: true }));

async function runCounts(url: string): Promise<Record<string, number>> {
  const { text } = await call(`${url}/metrics`, 'GET');
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^runledger_runs\{state="(\w+)"\} (\d+)$/gm)) counts[m[1]!] = Number(m[2]);
  return counts;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Starts the board and two computers, submits the load, waits for every run to end, reads the board's log. */
export async function measureWireLoad(options: WireLoadOptions = {}, log: (line: string) => void = () => {}): Promise<WireLoadFigures> {
  const quick = options.quick ?? false;
  const runs = options.runs ?? (quick ? 400 : 2_000);
  const lanes = options.lanes ?? (quick ? 40 : 200);
  const concurrency = options.concurrency ?? 32;
  const dir = mkdtempSync(join(tmpdir(), 'runledger-wireload-'));
  const procs: Proc[] = [];
  try {
    const boardDb = join(dir, 'board', 'board.db');
    mkdirSync(join(dir, 'board'));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const profiling = (who: string) => (options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${join(options.cpuProfDir, who)}`] : []);
    const pg = options.postgres ?? null;
    const logDb = pg ?? boardDb;
    const board = new Proc(['server', '--db', logDb, '--port', String(port), '--sync', options.boardSync ?? 'full'], profiling('board'));
    procs.push(board);
    // The second board on the same PostgreSQL log: each computer starts on one, the other its failover.
    const second = pg ? { port: await freePort() } : null;
    const secondUrl = second ? `http://127.0.0.1:${second.port}` : null;
    const boards = [board];
    if (second) {
      const other = new Proc(['server', '--db', logDb, '--port', String(second.port)], profiling('board-2'));
      procs.push(other);
      boards.push(other);
    }
    await Promise.all(boards.map((b) => b.waitFor(/board listening/)));
    const token = pg ? await submitTokenOf(pg) : readFileSync(join(dir, 'board', 'token'), 'utf8').trim();
    const tokens = await Promise.all(['c1', 'c2'].map((id) => computerToken(logDb, id)));
    const urls = [url, secondUrl ?? url];
    const computers = ['c1', 'c2'].map((id, i) => {
      mkdirSync(join(dir, id));
      const servers = secondUrl ? (i === 0 ? `${url},${secondUrl}` : `${secondUrl},${url}`) : url;
      const args = ['daemon', '--server', servers, '--computer', id, '--token', tokens[i]!, '--db', join(dir, id, `${id}.db`)];
      return new Proc([...args, '--slots', String(options.slots ?? 8), '--sync', 'normal', '--exec', 'echo ok'], profiling(id));
    });
    procs.push(...computers);
    await Promise.all(computers.map((c) => c.waitFor(/push stream connected/)));
    log(`${boards.length} board(s) ${urls.join(' ')} and 2 computers up; submitting ${runs} runs over ${lanes} lanes, ${concurrency} at a time`);

    const cpuBefore = [board, ...computers].map((p) => cpuMs(p.child.pid));
    const clientBefore = process.cpuUsage();
    const sentAt = new Map<string, number>();
    let next = 0;
    let retried = 0;
    const started = Date.now();
    const submitOne = async (i: number) => {
      const at = Date.now();
      // As a client does: a submit the board could not decide (507, or 503 log_contended when two boards kept
      // overtaking each other) is sent again with the same Idempotency-Key, so it is recorded once.
      for (let attempt = 0; ; attempt++) {
        const response = await call(
          `${urls[(i + attempt) % urls.length]}/v1/runs`,
          'POST',
          { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `wireload-${i}` },
          JSON.stringify({ lane: `lane-${i % lanes}`, prompt: `run ${i}` }),
        );
        const body = JSON.parse(response.text) as { run_id?: string };
        if (response.status === 201 && body.run_id) {
          sentAt.set(body.run_id, at);
          retried += attempt;
          return;
        }
        if (response.status < 500 || attempt >= 10) throw new Error(`submit ${i} answered ${response.status}: ${response.text}`);
      }
    };
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < runs) await submitOne(next++);
      }),
    );
    const submitSeconds = (Date.now() - started) / 1000;
    log(`submitted in ${submitSeconds.toFixed(1)} s (${(runs / submitSeconds).toFixed(0)} submits/s, ${retried} sent again)`);

    const deadline = Date.now() + (options.timeoutMs ?? Math.max(120_000, runs * 100));
    let lastReport = Date.now();
    for (;;) {
      const counts = await runCounts(url);
      const ended = TERMINAL.reduce((n, s) => n + (counts[s] ?? 0), 0);
      if (ended >= runs) break;
      if (Date.now() > deadline) throw new Error(`only ${ended} of ${runs} runs ended in time: ${JSON.stringify(counts)}`);
      if (Date.now() - lastReport > 5_000) {
        log(`${ended}/${runs} ended: ${JSON.stringify(counts)}`);
        lastReport = Date.now();
      }
      await sleep(100);
    }

    const cpuAfter = [board, ...computers].map((p) => cpuMs(p.child.pid));
    const client = process.cpuUsage(clientBefore);
    const spent = (i: number, part: 'self' | 'children') => (cpuAfter[i]?.[part] ?? Number.NaN) - (cpuBefore[i]?.[part] ?? Number.NaN);
    const cpuMsPerRun = cpuAfter.every((c) => c !== null)
      ? {
          board: spent(0, 'self') / runs,
          computers: (spent(1, 'self') + spent(2, 'self')) / runs,
          agents: (spent(1, 'children') + spent(2, 'children')) / runs,
          // This process: the submits and the polls of /metrics share the CPUs with what they measure.
          client: (client.user + client.system) / 1000 / runs,
        }
      : null;
    let rows: { type: string; runId: string; at: number; code: string | null }[];
    let boardEvents: number;
    if (pg) ({ rows, boardEvents } = await pgRows(pg));
    else {
      const db = new Database(boardDb, { readonly: true, fileMustExist: true });
      try {
        rows = db
          .prepare(
            `SELECT type, json_extract(data, '$.runId') AS runId, at, json_extract(data, '$.code') AS code FROM events
           WHERE type IN ('board.run.claimed', 'board.run.finished', 'board.run.resolved', 'board.run.cancelled', 'board.request.refused')`,
          )
          .all() as typeof rows;
        boardEvents = (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
      } finally {
        db.close();
      }
    }
    const latencies: number[] = [];
    let lastEnd = 0;
    let busy = 0;
    let claimedElsewhere = 0;
    for (const row of rows) {
      if (row.type === 'board.run.claimed') latencies.push(row.at - sentAt.get(row.runId)!);
      else if (row.type === 'board.request.refused') {
        busy += row.code === 'conversation_busy' ? 1 : 0;
        claimedElsewhere += row.code === 'claimed_elsewhere' ? 1 : 0;
      } else lastEnd = Math.max(lastEnd, row.at);
    }
    latencies.sort((a, b) => a - b);
    const seconds = (lastEnd - started) / 1000;
    return {
      runs,
      lanes,
      seconds,
      runsPerS: runs / seconds,
      submitSeconds,
      claimP50Ms: percentile(latencies, 50),
      claimP99Ms: percentile(latencies, 99),
      claimMaxMs: latencies.at(-1) ?? Number.NaN,
      states: await runCounts(url),
      busy,
      claimedElsewhere,
      boardEvents,
      cpuMsPerRun,
    };
  } finally {
    await Promise.all(procs.reverse().map((p) => p.stop()));
    if (options.cpuProfDir) log(`CPU profiles of the board and the computers written under ${options.cpuProfDir}`);
    if (process.env.WIRELOAD_KEEP) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** `runledger token add` on the PostgreSQL log: a board there has no token file. */
async function submitTokenOf(db: string): Promise<string> {
  const add = new Proc(['token', 'add', 'wireload', '--db', db, '--json']);
  if ((await add.exited) !== 0) throw new Error(`token add failed: ${add.err}`);
  return (JSON.parse(add.out) as { token: string }).token;
}

/** The board's rows the figures are read from, on PostgreSQL. */
async function pgRows(url: string): Promise<{ rows: { type: string; runId: string; at: number; code: string | null }[]; boardEvents: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const found = await client.query<{ type: string; runId: string; at: string; code: string | null }>(
      `SELECT type, data::json ->> 'runId' AS "runId", at, data::json ->> 'code' AS code FROM events
       WHERE type IN ('board.run.claimed', 'board.run.finished', 'board.run.resolved', 'board.run.cancelled', 'board.request.refused')`,
    );
    const count = await client.query<{ n: string }>('SELECT count(*) AS n FROM events');
    return { rows: found.rows.map((r) => ({ ...r, at: Number(r.at) })), boardEvents: Number(count.rows[0]!.n) };
  } finally {
    await client.end();
  }
}

export async function runWireLoadBench(options: WireLoadOptions = {}, log?: (line: string) => void): Promise<Row[]> {
  await ensureBuilt(); // the CLI it spawns runs dist/: built from the sources as they are
  const f = await measureWireLoad(options, log);
  const allSucceeded = (f.states.succeeded ?? 0) === f.runs;
  const sync = options.boardSync ?? 'full';
  const cpu = f.cpuMsPerRun;
  const cpuNote = cpu
    ? `; CPU a run: board ${cpu.board.toFixed(1)} ms, computers ${cpu.computers.toFixed(1)} ms, agent launchers and agents ${cpu.agents.toFixed(1)} ms, load generator ${cpu.client.toFixed(1)} ms`
    : '';
  return [
    {
      benchmark: `wire load: ${f.runs} runs over ${f.lanes} lanes, 2 computers`,
      subject: `${f.runsPerS.toFixed(0)} runs/s`,
      baseline: `${(f.runs / f.submitSeconds).toFixed(0)} submits/s`,
      ratio: `${(f.runsPerS / TARGET_RUNS_PER_S).toFixed(2)} of target`,
      target: `≥ ${TARGET_RUNS_PER_S} runs/s`,
      pass: f.runsPerS >= TARGET_RUNS_PER_S && allSucceeded,
      note:
        `first submit to last run ended in ${f.seconds.toFixed(1)} s; states ${JSON.stringify(f.states)}; ` +
        `${f.busy} conversation_busy and ${f.claimedElsewhere} claimed_elsewhere answers; ${f.boardEvents} events in the board's log (board --sync ${sync}, computers --sync normal)${cpuNote}`,
    },
    {
      benchmark: 'wire load: submit→claim latency',
      subject: `p50 ${f.claimP50Ms.toFixed(0)} ms`,
      baseline: `p99 ${f.claimP99Ms.toFixed(0)} ms`,
      ratio: `max ${f.claimMaxMs.toFixed(0)} ms`,
      target: 'reported',
      pass: Number.isFinite(f.claimP50Ms),
      note: "from the client's send of the submit to the board's board.run.claimed (its `at`), over every run",
    },
  ];
}

export const wireLoad: Benchmark = {
  name: 'wireLoad',
  run: (options) => runWireLoadBench({ quick: options.quick }, (line) => process.stderr.write(`  [wireLoad] ${line}\n`)),
};

/**
 * The same load through two boards on one PostgreSQL log (a throwaway durable cluster, or
 * RUNLEDGER_BENCH_PG_URL's server, a fresh schema on it): its rows stand beside the SQLite board's.
 */
export const wireLoadPostgres: Benchmark = {
  name: 'wireLoadPostgres',
  async run(options) {
    const given = process.env.RUNLEDGER_BENCH_PG_URL;
    const cluster = given ? null : await startPostgresCluster({ durable: true });
    try {
      const url = await createSchemaLog(given ?? cluster!.url, `wireload_${process.pid}_${Date.now()}`);
      const rows = await runWireLoadBench({ quick: options.quick, postgres: url }, (line) => process.stderr.write(`  [wireLoadPostgres] ${line}\n`));
      // Reported beside the SQLite board's, not held to its target yet: two boards deciding at once refuse
      // each other's stale decisions, and each refusal waits out the board's appends in flight (README, PostgreSQL).
      return rows.map((row, i) => ({
        ...row,
        benchmark: row.benchmark.replace('wire load', 'wire load, 2 boards on PostgreSQL'),
        ...(i === 0 ? { target: 'reported', pass: /"succeeded":(\d+)/.exec(row.note ?? '')?.[1] === String(options.quick ? 400 : 2_000) } : {}),
      }));
    } finally {
      cluster?.stop();
    }
  },
};

async function main(argv: readonly string[]): Promise<number> {
  const quick = argv.includes('--quick');
  const syncAt = argv.indexOf('--board-sync');
  const boardSync = syncAt === -1 ? 'full' : argv[syncAt + 1];
  if (boardSync !== 'full' && boardSync !== 'normal') throw new Error('--board-sync wants full or normal');
  const cpuProfDir = argv.includes('--cpu-prof') ? mkdtempSync(join(tmpdir(), 'runledger-wireload-prof-')) : null;
  process.stderr.write(`wire load bench: node ${process.version}, ${cpus().length} CPUs${quick ? ', quick' : ''}\n`);
  const rows = await runWireLoadBench({ quick, boardSync, cpuProfDir }, (line) => process.stderr.write(`  ${line}\n`));
  for (const row of rows) {
    console.log(
      `${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: ${row.subject}, ${row.baseline}, ${row.ratio} (target ${row.target})${row.note ? `\n      ${row.note}` : ''}`,
    );
  }
  return rows.every((r) => r.pass) ? 0 : 1;
}

runIfMain(import.meta.url, main);
