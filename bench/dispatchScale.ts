/**
 * Dispatch as the number of computers grows (issue 31): a real board (`runledger server`, a process of
 * its own, SQLite) and N stand-in computers in this process that speak the real push stream and claim
 * over HTTP (bench/fakeComputer.ts). Measured:
 * - submit→claimed p50/p99 with new-lane runs submitted at 10 a second, with 50, 100 and 500 computers
 *   (from the submit's send to the claim's 200, both seen here). Target: p99 ≤ 100 ms at 500.
 * - the log's rows a run (events in `run:` streams over runs) at each size: the target is rows that do
 *   not grow with the number of computers (the largest within 20% of the smallest).
 * - a backlog submitted with no computer connected, drained by 1 and then by 10 computers that connect
 *   (2 slots each; turns of 0 ms, then of 50 ms): runs/s from the first connect to the last completion.
 *   Target: ten no slower than one.
 *
 *   npx tsx bench/dispatchScale.ts [--quick] [--only latency|backlog]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { addComputer } from '../apps/board/addComputer.ts';
import { systemClock } from '../runtime/actors/clock.ts';
import { openSqliteStore } from '../runtime/store/sqlite/sqliteEventStore.ts';
import { FakeComputer } from './fakeComputer.ts';
import { type Benchmark, type Row, runIfMain } from './harness.ts';
import { callWith } from './httpCall.ts';

const CLI = fileURLToPath(new URL('../cli/runledger.js', import.meta.url));
const P99_TARGET_MS = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const call = callWith(new Agent({ keepAlive: true, maxSockets: 256 }));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** A board process on a fresh log with `computers` registered, and what it takes to talk to it. */
class Board {
  readonly dir = mkdtempSync(join(tmpdir(), 'runledger-dispatch-'));
  readonly db = join(this.dir, 'board.db');
  url = '';
  submitToken = '';
  tokens: Record<string, string> = {};
  private child: ChildProcess | null = null;
  private out = '';

  async start(computers: readonly string[]): Promise<void> {
    const store = await openSqliteStore(this.db);
    try {
      for (const id of computers) this.tokens[id] = (await addComputer(store, systemClock, id)).token;
    } finally {
      await store.close();
    }
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    this.child = spawn(process.execPath, [CLI, 'server', '--db', this.db, '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (c: string) => (this.out = (this.out + c).slice(-20_000)));
    this.child.stderr!.setEncoding('utf8').on('data', (c: string) => (this.out = (this.out + c).slice(-20_000)));
    const deadline = Date.now() + 30_000;
    while (!/board listening/.test(this.out)) {
      if (this.child.exitCode !== null) throw new Error(`the board exited:\n${this.out}`);
      if (Date.now() > deadline) throw new Error(`the board did not start:\n${this.out}`);
      await sleep(50);
    }
    this.submitToken = readFileSync(join(this.dir, 'token'), 'utf8').trim();
  }

  async submit(lane: string, key: string): Promise<string> {
    const answer = await call(
      `${this.url}/v1/runs`,
      'POST',
      { authorization: `Bearer ${this.submitToken}`, 'content-type': 'application/json', 'idempotency-key': key },
      JSON.stringify({ lane, prompt: 'p' }),
    );
    if (answer.status !== 201) throw new Error(`submit answered ${answer.status}: ${answer.text}`);
    return (JSON.parse(answer.text) as { run_id: string }).run_id;
  }

  /** Rows in the runs' own streams, and the claims recorded (granted or refused). */
  rows(): { runRows: number; claims: number; refusals: number } {
    const db = new Database(this.db, { readonly: true, fileMustExist: true });
    try {
      const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
      return {
        runRows: count("SELECT count(*) AS n FROM events WHERE stream LIKE 'run:%'"),
        claims: count("SELECT count(*) AS n FROM events WHERE type = 'board.claim.requested'"),
        refusals: count("SELECT count(*) AS n FROM events WHERE type = 'board.request.refused'"),
      };
    } finally {
      db.close();
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await new Promise((resolve) => child.once('exit', resolve));
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

interface World {
  readonly board: Board;
  readonly computers: FakeComputer[];
  readonly claimedAt: Map<string, number>;
  readonly completed: Set<string>;
}

async function world(n: number, slots: number, agentMs: number): Promise<World> {
  const ids = Array.from({ length: n }, (_, i) => `c${String(i).padStart(3, '0')}`);
  const board = new Board();
  await board.start(ids);
  const claimedAt = new Map<string, number>();
  const completed = new Set<string>();
  const computers = ids.map(
    (id) =>
      new FakeComputer({
        id,
        token: board.tokens[id]!,
        url: board.url,
        call,
        slots,
        agentMs,
        claimed: (runId) => void (claimedAt.has(runId) || claimedAt.set(runId, performance.now())),
        completed: (runId) => void completed.add(runId),
      }),
  );
  return { board, computers, claimedAt, completed };
}

async function allCompleted(w: World, runs: number, what: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (w.completed.size < runs) {
    if (Date.now() > deadline) throw new Error(`${what}: only ${w.completed.size} of ${runs} runs completed in ${ms / 1000} s`);
    await sleep(20);
  }
}

/** Waits until the board has recorded every computer connected (its metrics say so). */
async function connected(board: Board, n: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { text } = await call(`${board.url}/metrics`, 'GET');
    const m = /^runledger_computers_connected (\d+)$/m.exec(text);
    if (m && Number(m[1]) >= n) return;
    if (Date.now() > deadline) throw new Error(`only ${m?.[1] ?? '?'} of ${n} computers recorded connected`);
    await sleep(50);
  }
}

export interface LatencyFigures {
  readonly computers: number;
  readonly runs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly rowsPerRun: number;
  readonly claimsPerRun: number;
}

/** New-lane runs at `perS` a second for `seconds`, with `n` computers of one slot each, turns of 0 ms. */
export async function measureLatency(n: number, perS: number, seconds: number): Promise<LatencyFigures> {
  const w = await world(n, 1, 0);
  try {
    await Promise.all(w.computers.map((c) => c.connect()));
    await connected(w.board, n);
    const runs = perS * seconds;
    const sentAt = new Map<string, number>();
    const started = performance.now();
    const submits: Promise<void>[] = [];
    for (let i = 0; i < runs; i++) {
      const due = started + (i * 1000) / perS;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      submits.push(
        (async () => {
          const at = performance.now();
          sentAt.set(await w.board.submit(`lane-${i}`, `k${i}`), at);
        })(),
      );
    }
    await Promise.all(submits);
    await allCompleted(w, runs, `${n} computers`, 300_000);
    const latencies = [...sentAt].map(([runId, at]) => w.claimedAt.get(runId)! - at).sort((a, b) => a - b);
    const rows = w.board.rows();
    return {
      computers: n,
      runs,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      rowsPerRun: rows.runRows / runs,
      claimsPerRun: rows.claims / runs,
    };
  } finally {
    for (const c of w.computers) c.close();
    await w.board.stop();
  }
}

export interface DrainFigures {
  readonly computers: number;
  readonly runs: number;
  readonly runsPerS: number;
  readonly claimsPerRun: number;
}

/** `runs` on new lanes submitted with nobody connected, then `n` computers (2 slots) connect and drain them. */
export async function measureDrain(n: number, runs: number, agentMs: number): Promise<DrainFigures> {
  const w = await world(n, 2, agentMs);
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < runs) {
          const i = next++;
          await w.board.submit(`lane-${i}`, `k${i}`);
        }
      }),
    );
    const started = performance.now();
    await Promise.all(w.computers.map((c) => c.connect()));
    await allCompleted(w, runs, `backlog with ${n} computers`, 600_000);
    const seconds = (performance.now() - started) / 1000;
    return { computers: n, runs, runsPerS: runs / seconds, claimsPerRun: w.board.rows().claims / runs };
  } finally {
    for (const c of w.computers) c.close();
    await w.board.stop();
  }
}

export async function runDispatchScale(quick: boolean, only: string | null, log: (line: string) => void): Promise<Row[]> {
  const rows: Row[] = [];
  if (only === null || only === 'latency') {
    const seconds = quick ? 5 : 20;
    const sizes = [50, 100, 500];
    const figures: LatencyFigures[] = [];
    for (const n of sizes) {
      const f = await measureLatency(n, 10, seconds);
      log(
        `${n} computers: p50 ${f.p50Ms.toFixed(1)} ms, p99 ${f.p99Ms.toFixed(1)} ms, ${f.rowsPerRun.toFixed(1)} rows a run, ${f.claimsPerRun.toFixed(2)} claims a run`,
      );
      figures.push(f);
      rows.push({
        benchmark: `dispatch: submit→claimed, ${n} computers, 10 new-lane runs/s`,
        subject: `p99 ${f.p99Ms.toFixed(0)} ms`,
        baseline: `p50 ${f.p50Ms.toFixed(1)} ms`,
        ratio: `${(f.p99Ms / P99_TARGET_MS).toFixed(2)} of target`,
        target: n === 500 ? `p99 ≤ ${P99_TARGET_MS} ms` : 'reported',
        pass: n === 500 ? f.p99Ms <= P99_TARGET_MS : Number.isFinite(f.p99Ms),
        note: `${f.runs} runs; ${f.claimsPerRun.toFixed(2)} claims recorded a run`,
      });
    }
    const least = figures[0]!;
    const most = figures.at(-1)!;
    rows.push({
      benchmark: `dispatch: log rows a run, ${least.computers} vs ${most.computers} computers`,
      subject: `${most.rowsPerRun.toFixed(1)} rows`,
      baseline: `${least.rowsPerRun.toFixed(1)} rows`,
      ratio: `${(most.rowsPerRun / least.rowsPerRun).toFixed(2)}x`,
      target: '≤ 1.2x (independent of computers)',
      pass: most.rowsPerRun <= least.rowsPerRun * 1.2,
      note: `rows in run: streams over runs: ${figures.map((f) => `${f.computers}: ${f.rowsPerRun.toFixed(1)}`).join(', ')}`,
    });
  }
  if (only === null || only === 'backlog') {
    for (const agentMs of [0, 50]) {
      const runs = agentMs === 0 ? (quick ? 1_000 : 5_000) : quick ? 300 : 1_000;
      const one = await measureDrain(1, runs, agentMs);
      log(`backlog of ${runs} (turns ${agentMs} ms), 1 computer: ${one.runsPerS.toFixed(0)} runs/s, ${one.claimsPerRun.toFixed(2)} claims a run`);
      const ten = await measureDrain(10, runs, agentMs);
      log(`backlog of ${runs} (turns ${agentMs} ms), 10 computers: ${ten.runsPerS.toFixed(0)} runs/s, ${ten.claimsPerRun.toFixed(2)} claims a run`);
      rows.push({
        benchmark: `dispatch: backlog of ${runs} drained, turns of ${agentMs} ms, 10 vs 1 computer (2 slots each)`,
        subject: `${ten.runsPerS.toFixed(0)} runs/s`,
        baseline: `${one.runsPerS.toFixed(0)} runs/s`,
        ratio: `${(ten.runsPerS / one.runsPerS).toFixed(2)}x`,
        target: agentMs === 0 ? '≥ 0.9x (ten no slower)' : '> 1x (ten faster)',
        pass: agentMs === 0 ? ten.runsPerS >= one.runsPerS * 0.9 : ten.runsPerS > one.runsPerS,
        note: `claims recorded a run: ${one.claimsPerRun.toFixed(2)} with one, ${ten.claimsPerRun.toFixed(2)} with ten`,
      });
    }
  }
  return rows;
}

export const dispatchScale: Benchmark = {
  name: 'dispatchScale',
  run: (options) => runDispatchScale(options.quick, null, (line) => process.stderr.write(`  [dispatchScale] ${line}\n`)),
};

runIfMain(import.meta.url, async (argv) => {
  const at = argv.indexOf('--only');
  const rows = await runDispatchScale(argv.includes('--quick'), at === -1 ? null : argv[at + 1]!, (line) => process.stderr.write(`  ${line}\n`));
  for (const row of rows) {
    console.log(
      `${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: ${row.subject}, ${row.baseline}, ${row.ratio} (target ${row.target})${row.note ? `\n      ${row.note}` : ''}`,
    );
  }
  return rows.every((r) => r.pass) ? 0 : 1;
});
