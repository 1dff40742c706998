/**
 * `runledger daemon` as a real process, as a user starts it (the built CLI): for the benches that time a
 * life from its spawn, kill it, or keep its CPU apart from the load driver's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, loadDriver } from './embeddedLoad.ts';

const MAIN = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const TERMINAL = /"state":"(succeeded|failed|cancelled|resolved)"/;

export interface DaemonLife {
  readonly child: ChildProcess;
  readonly url: string;
  readonly token: string;
  /** The file its stdout goes to: its narration (and, with `traceGc`, V8's line for each collection). */
  readonly narration: string;
  /** Seconds from the spawn until a run submitted as soon as the board answered was done. */
  readonly firstRunDone: number;
}

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

/** Waits (bounded) until run `runId` is terminal on the board at `url`. */
export async function runDone(url: string, runId: string, deadline: number): Promise<void> {
  for (;;) {
    const { text } = await call(`${url}/v1/runs/${runId}`, 'GET');
    if (TERMINAL.test(text)) return;
    if (Date.now() > deadline) throw new Error(`run ${runId} was not done in time`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Spawns a daemon on `db` (`args`: its options besides --db and --port) and times it until a first run
 * submitted as soon as it serves is done. Its narration goes to a file beside the log, for a look when
 * a life is slow. With `traceGc`, V8 writes a line there for each collection of the daemon's heap.
 */
export async function spawnDaemon(db: string, args: readonly string[], how: { traceGc?: boolean } = {}): Promise<DaemonLife> {
  const port = await freePort();
  const started = performance.now();
  const narration = `${db}.life-${Date.now()}.log`;
  const child = spawn(process.execPath, [...(how.traceGc ? ['--trace-gc'] : []), MAIN, 'daemon', '--db', db, '--port', String(port), ...args], {
    stdio: ['ignore', openSync(narration, 'w'), 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  let token = '';
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the daemon exited ${child.exitCode} before it served`);
    if (Date.now() > deadline) throw new Error('the daemon did not serve within 60 s');
    let runId: string | null = null;
    try {
      token ||= readFileSync(join(db, '..', 'token'), 'utf8').trim();
      const submitted = await call(
        `${url}/v1/runs`,
        'POST',
        { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        '{"lane":"first","prompt":"hi"}',
      );
      if (submitted.status === 201) runId = (JSON.parse(submitted.text) as { run_id: string }).run_id;
    } catch {
      // Not serving yet (no token file, connection refused).
    }
    if (runId !== null) {
      await runDone(url, runId, deadline);
      return { child, url, token, narration, firstRunDone: (performance.now() - started) / 1000 };
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** SIGKILLs the life and waits for its exit. */
export async function killLife(life: DaemonLife, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (life.child.exitCode !== null) return;
  const exited = new Promise((resolve) => life.child.once('exit', resolve));
  life.child.kill(signal);
  await exited;
}

/**
 * Runs `runs` more and waits until no run of the board is left unfinished (the load driver counts the
 * terminal runs of the whole log against what it submitted itself, so a later life's would end early).
 */
export async function loadUntilIdle(life: DaemonLife, runs: number): Promise<void> {
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
