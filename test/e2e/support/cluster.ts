/**
 * Real processes on loopback for the end-to-end tests (docs/rules.md#wire-and-cli): `runledger server`, `daemon`
 * and `computer add` run through the published entry point, each test in its own folder, on ports
 * picked free. Everything a test starts is killed when it ends, agents its SIGKILLed daemons left
 * behind included. Waits poll the board or a file, bounded; nothing sleeps a fixed time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { messageOf } from '../../../events/thrown.ts';
import { exitOf } from '../../support/exitOf.ts';
import { runInProcess } from '../../support/inProcessCli.ts';
import { whenTestEnds } from '../../support/testScope.ts';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const cli = join(repoRoot, 'cli/runledger.js');
/** The agent of these tests: one line per execution in $MARKER_FILE (see the fixture). */
export const MARKER_AGENT = `/bin/sh ${JSON.stringify(join(repoRoot, 'test/fixtures/e2e/markerAgent.sh'))}`;

/** A port nobody listens on right now (the CLI cannot be told to take port 0 and say which it got). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls `probe` until it returns something other than undefined/null/false; fails naming `what` after `ms`. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  ms = 15_000,
  every = 100,
): Promise<T> {
  const deadline = Date.now() + ms;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline)
      throw new Error(`timed out after ${ms} ms waiting for ${what}${lastError ? ` (last error: ${messageOf(lastError)})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, every));
  }
}

/** One `runledger …` process with its output kept, killed (SIGKILL) when the test ends if still alive. */
export class CliProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private out = '';
  private err = '';

  constructor(
    readonly args: readonly string[],
    env: Record<string, string> = {},
    cwd: string = repoRoot,
  ) {
    this.child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.out += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.err += chunk));
    this.exited = exitOf(this.child);
  }

  get stdout(): string {
    return this.out;
  }

  get stderr(): string {
    return this.err;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Waits for a line of stdout matching `pattern`; fails at once when the process exits first. */
  async waitForOutput(pattern: RegExp, ms = 15_000): Promise<void> {
    const seen = await waitFor(
      `"${pattern.source}" from runledger ${this.args.slice(0, 2).join(' ')}`,
      () => (pattern.test(this.out) ? 'printed' : !this.alive && 'exited'),
      ms,
      50,
    );
    if (seen === 'exited') throw new Error(`it exited first: ${this.describe()}`);
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.alive) this.child.kill(signal);
  }

  /** Sends `signal` and waits for the exit; SIGKILL after `ms` if it is still running. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', ms = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.kill(signal);
    const timer = setTimeout(() => this.kill('SIGKILL'), ms);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  describe(): string {
    return `runledger ${this.args.join(' ')}\n--- stdout\n${this.out.slice(-4000)}\n--- stderr\n${this.err.slice(-4000)}`;
  }
}

/** `env` is added to this process's; `cwd`, the folder it runs in, is the checkout's unless given. */
export function startCli(args: readonly string[], env: Record<string, string> = {}, cwd?: string): CliProcess {
  const process = new CliProcess(args, env, cwd);
  whenTestEnds(async () => {
    process.kill('SIGKILL');
    await process.exited;
  });
  return process;
}

/**
 * A short-lived `runledger …` to completion (async, so several can run side by side, in concurrent
 * tests too: bounded by `ms` alone, it is not tied to "the current test", which is another's there).
 */
export async function runCli(
  args: readonly string[],
  ms = 30_000,
  how: { env?: Record<string, string>; cwd?: string } = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const run = new CliProcess(args, how.env, how.cwd);
  const timer = setTimeout(() => run.kill('SIGKILL'), ms);
  const { code } = await run.exited;
  clearTimeout(timer);
  return { status: code, stdout: run.stdout, stderr: run.stderr };
}

/** `runledger …` that must succeed: its stdout, or an error with its stderr. */
export async function cliOk(args: readonly string[]): Promise<string> {
  const result = await runCli(args);
  if (result.status !== 0) throw new Error(`runledger ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

/** `runledger server --db URL` (a PostgreSQL log: several at once) on a free port, once it listens. */
export async function startPostgresServer(
  url: string,
  args: readonly string[] = [],
  lifetime: Lifetime = {},
): Promise<{ url: string; process: CliProcess }> {
  const port = await freePort();
  const process = startFor(lifetime, ['server', '--db', url, '--port', String(port), ...args]);
  await process.waitForOutput(/board listening on http:\/\//);
  return { url: `http://127.0.0.1:${port}`, process };
}

// ---------------------------------------------------------------------------------------------------
// The board

export interface BoardProcess {
  readonly url: string;
  readonly db: string;
  /** The submit token `server`/`daemon` wrote beside the log. */
  readonly token: string;
  readonly process: CliProcess;
}

/**
 * Killed when the test ends; or, `shared` by the file's tests (started in its beforeAll), stopped by
 * the file's afterAll: each test then keeps to lanes and runs of its own.
 */
export interface Lifetime {
  readonly shared?: boolean;
}

function startFor(lifetime: Lifetime, args: readonly string[], env?: Record<string, string>): CliProcess {
  return lifetime.shared ? new CliProcess(args, env) : startCli(args, env);
}

/** `runledger server` (or, with `daemon` args, board and computer in one) on a free port, once it answers. */
export async function startBoard(
  db: string,
  options: { command?: 'server' | 'daemon'; port?: number; args?: readonly string[]; env?: Record<string, string> } & Lifetime = {},
): Promise<BoardProcess> {
  mkdirSync(dirname(db), { recursive: true });
  const port = options.port ?? (await freePort());
  const process = startFor(options, [options.command ?? 'server', '--db', db, '--port', String(port), ...(options.args ?? [])], options.env);
  await process.waitForOutput(/board listening on http:\/\//);
  const url = `http://127.0.0.1:${port}`;
  await waitFor('the board to answer /healthz', async () => (await fetch(`${url}/healthz`)).status === 200);
  return { url, db, token: readFileSync(join(dirname(db), 'token'), 'utf8').trim(), process };
}

/**
 * `runledger computer add ID --json` on the board's log (a file or a postgres:// URL): the computer's
 * token. Run in this process (see runInProcess): a set-up step whose exit status no test here is about.
 */
export function addComputer(db: string, id: string): Promise<string> {
  return tokenFrom(['computer', 'add', id, '--db', db, '--json']);
}

/** `runledger token add NAME --json` on the board's log, in this process as addComputer: the submit token. */
export function addSubmitToken(db: string, name: string): Promise<string> {
  return tokenFrom(['token', 'add', name, '--db', db, '--json']);
}

async function tokenFrom(args: readonly string[]): Promise<string> {
  const result = await runInProcess(args);
  if (result.status !== 0) throw new Error(`runledger ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return (JSON.parse(result.stdout) as { token: string }).token;
}

/** Where a test's agents write their markers and pids. */
export interface AgentFiles {
  readonly markers: string;
  readonly pids: string;
  readonly env: Record<string, string>;
}

/** The marker agent's files in `dir`; every agent it started is killed when the test ends (`shared`: by killAgents, in the file's afterAll). */
export function agentFiles(dir: string, lifetime: Lifetime = {}): AgentFiles {
  const markers = join(dir, 'markers');
  const pids = join(dir, 'agent-pids');
  const files = { markers, pids, env: { MARKER_FILE: markers, MARKER_PIDS: pids } };
  if (!lifetime.shared) whenTestEnds(() => killAgents(files));
  return files;
}

/** Kills every agent that wrote its pid to `files`, with its process group. */
export function killAgents(files: AgentFiles): void {
  for (const pid of lines(files.pids)) killWithGroup(Number(pid));
}

/**
 * SIGKILLs `pid` and its process group, the one its daemon started its turn in (unless that is the
 * tests' own): the sh agent waits in a `sleep` child, which killing the sh alone would leave behind.
 */
function killWithGroup(pid: number): void {
  const group = groupOf(pid);
  for (const target of group !== null && group !== groupOf(process.pid) ? [-group, pid] : [pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

function groupOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (comm) ": state, ppid, pgrp (comm may itself hold spaces and parentheses).
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return null;
  }
}

/**
 * Whether a process still runs: a zombie does not (where PID 1 reaps no orphans, a killed agent whose
 * daemon died stays a zombie, and `kill(pid, 0)` still finds it).
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return !existsSync('/proc/self');
  }
}

export function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** How many times each marker was executed. */
export function markerCounts(file: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of lines(file)) counts[line] = (counts[line] ?? 0) + 1;
  return counts;
}

/** `runledger daemon --server URL --computer ID --token T` on a log of its own, once its push stream is up. */
export async function startComputer(
  options: {
    dir: string;
    id: string;
    server: string;
    token: string;
    agent: AgentFiles;
    args?: readonly string[];
  } & Lifetime,
): Promise<{ db: string; process: CliProcess }> {
  const db = join(options.dir, options.id, `${options.id}.db`);
  mkdirSync(dirname(db), { recursive: true });
  const process = startFor(
    options,
    [
      'daemon',
      '--server',
      options.server,
      '--computer',
      options.id,
      '--token',
      options.token,
      '--db',
      db,
      '--heartbeat-s',
      '1',
      '--exec',
      MARKER_AGENT,
      ...(options.args ?? []),
    ],
    options.agent.env,
  );
  await process.waitForOutput(/push stream connected/);
  return { db, process };
}

// ---------------------------------------------------------------------------------------------------
// The wire, as a client sees it

export interface RunView {
  run_id: string;
  lane: string;
  state: string;
  computer_id?: string;
  reply?: string;
  error?: string;
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'resolved']);

export async function submit(board: Pick<BoardProcess, 'url' | 'token'>, lane: string, prompt: string): Promise<string> {
  const response = await fetch(`${board.url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${board.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lane, prompt }),
  });
  const body = (await response.json()) as { run_id?: string };
  if (response.status !== 201 || !body.run_id) throw new Error(`submit answered ${response.status}: ${JSON.stringify(body)}`);
  return body.run_id;
}

export async function getRun(url: string, runId: string): Promise<RunView> {
  const response = await fetch(`${url}/v1/runs/${runId}`);
  if (response.status !== 200) throw new Error(`GET /v1/runs/${runId} answered ${response.status}`);
  return (await response.json()) as RunView;
}

/** Polls the board until `runId` is in one of `states`. */
export function waitForState(url: string, runId: string, states: readonly string[], ms = 20_000): Promise<RunView> {
  return waitFor(
    `run ${runId} to be ${states.join(' or ')}`,
    async () => {
      const run = await getRun(url, runId);
      return states.includes(run.state) ? run : null;
    },
    ms,
  );
}

export function waitForTerminal(url: string, runId: string, ms = 20_000): Promise<RunView> {
  return waitForState(url, runId, [...TERMINAL], ms);
}

/**
 * Each run's end, waited for one after another: a run already ended answers at the first look, so this
 * takes as long as the slowest run, polling one run at a time (a poller per run at once sent the board
 * a request per run every 100 ms). `url`: the board asked, or the board to ask of the run at each index.
 */
export async function waitForAllTerminal(url: string | ((index: number) => string), runIds: readonly string[], ms = 20_000): Promise<RunView[]> {
  const views: RunView[] = [];
  for (const [i, runId] of runIds.entries()) views.push(await waitForTerminal(typeof url === 'string' ? url : url(i), runId, ms));
  return views;
}

/** The number of computers on the board's push stream, from `/metrics`. */
export async function connectedComputers(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^runledger_computers_connected (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

// ---------------------------------------------------------------------------------------------------
// The log, as the stock tools see it

export interface LogRow {
  readonly seq: number;
  readonly stream: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly at: number;
}

/** Every event of a log, read through a read-only connection of its own (the writer may still run). */
export function readLog(db: string): LogRow[] {
  const connection = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const rows = connection.prepare('SELECT seq, stream, type, data, at FROM events ORDER BY seq').all() as {
      seq: number;
      stream: string;
      type: string;
      data: string;
      at: number;
    }[];
    return rows.map((row) => ({ ...row, data: JSON.parse(row.data) as Record<string, unknown> }));
  } finally {
    connection.close();
  }
}

export function eventsOf(log: readonly LogRow[], type: string, runId?: string): LogRow[] {
  return log.filter((e) => e.type === type && (runId === undefined || e.data.runId === runId));
}

/**
 * `runledger replay` and `runledger rebuild` on each log: both must succeed (exit 0). The commands run
 * in this process (see runInProcess), for a fresh process per check costs over a second of a shared
 * CPU; `checkLogsWithCli` spawns them.
 */
export async function checkLogs(dbs: readonly string[]): Promise<void> {
  const failures: string[] = [];
  for (const db of dbs) {
    for (const command of ['replay', 'rebuild']) {
      const result = await runInProcess([command, '--db', db]);
      if (result.status !== 0) failures.push(`runledger ${command} --db ${db}: exit ${result.status}\n${result.stdout}${result.stderr}`);
    }
  }
  if (failures.length) throw new Error(failures.join('\n'));
}

/** The same checks through the published entry point, each in a process of its own: the exit status itself. */
export async function checkLogsWithCli(dbs: readonly string[]): Promise<void> {
  const results = await Promise.all(
    dbs.flatMap((db) => ['replay', 'rebuild'].map(async (command) => ({ db, command, ...(await runCli([command, '--db', db])) }))),
  );
  const failed = results.filter((r) => r.status !== 0);
  if (failed.length) throw new Error(failed.map((r) => `runledger ${r.command} --db ${r.db}: exit ${r.status}\n${r.stdout}${r.stderr}`).join('\n'));
}
