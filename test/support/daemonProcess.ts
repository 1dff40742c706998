import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { exitOf } from './exitOf.ts';
import { repoRoot } from './processes.ts';
import { whenTestEnds } from './testScope.ts';

const cli = join(repoRoot, 'cli/runledger.js');

/** Another `runledger` than the checkout's (an installed one: `bin`), from another folder, with another environment. */
export interface HowStarted {
  readonly bin?: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Shared by a file's tests (started in beforeAll): the file ends it (`kill()` in afterAll), not the test that started it. */
  readonly sharedByFile?: boolean;
}

/**
 * `runledger daemon` as a user starts it: a process of its own on a real log, its board on a port the
 * system picks. Killed (SIGKILL) when the test ends if still alive, and so is every agent process
 * group its log says it began (a SIGKILLed daemon leaves its agents behind).
 */
export class DaemonProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private out = '';

  private constructor(
    readonly db: string,
    args: readonly string[],
    how: HowStarted,
  ) {
    const argv = ['daemon', '--db', db, '--port', '0', ...args];
    this.child = how.bin
      ? spawn(how.bin, argv, { cwd: how.cwd ?? repoRoot, env: how.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(process.execPath, [cli, ...argv], { cwd: how.cwd ?? repoRoot, env: how.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.out += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.out += chunk));
    this.exited = exitOf(this.child);
  }

  /** Starts a daemon and resolves once its computer is connected to its board. */
  static async start(db: string, args: readonly string[], how: HowStarted = {}): Promise<DaemonProcess> {
    const daemon = new DaemonProcess(db, args, how);
    if (!how.sharedByFile) whenTestEnds(() => daemon.kill());
    await daemon.waitForOutput(/push stream connected/);
    return daemon;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get output(): string {
    return this.out;
  }

  /** The board's address, from the daemon's own first line. */
  get url(): string {
    const match = /board listening on (http:\/\/\S+)/.exec(this.out);
    if (!match) throw new Error(`the daemon named no board address: ${this.out}`);
    return match[1]!;
  }

  /** SIGKILL, and every agent process group its log says it began (a SIGKILLed daemon leaves its agents behind). */
  kill(): void {
    this.signal('SIGKILL');
    killAgentsOf(this.db);
  }

  signal(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  async waitForOutput(pattern: RegExp, ms = 15_000): Promise<void> {
    await waitUntil(
      `the daemon to print ${pattern}`,
      () => {
        if (pattern.test(this.out)) return true;
        if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`the daemon exited first:\n${this.out}`);
        return false;
      },
      ms,
    );
  }

  /** Its exit, within `ms`. */
  async exit(ms = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the daemon did not exit within ${ms} ms:\n${this.out}`)), ms);
    });
    try {
      return await Promise.race([this.exited, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** `POST /v1/runs` with the submit token the daemon keeps beside its log; the run's id. */
  async submit(lane: string, prompt: string, timeoutS?: number): Promise<string> {
    const token = readFileSync(join(dirname(this.db), 'token'), 'utf8').trim();
    const response = await fetch(`${this.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lane, prompt, ...(timeoutS !== undefined ? { timeout_s: timeoutS } : {}) }),
    });
    const body = (await response.json()) as { run_id?: string };
    if (response.status !== 201 || !body.run_id) throw new Error(`submit answered ${response.status}: ${JSON.stringify(body)}`);
    return body.run_id;
  }

  /** `GET /v1/runs/{id}`. */
  async show(runId: string): Promise<{ state: string; reply?: string; error?: string }> {
    const response = await fetch(`${this.url}/v1/runs/${runId}`);
    return (await response.json()) as { state: string; reply?: string; error?: string };
  }

  /** The run as the board has it, once it is terminal. */
  async terminal(runId: string, ms = 15_000): Promise<{ state: string; reply?: string; error?: string }> {
    let last = { state: 'unknown' } as { state: string; reply?: string; error?: string };
    await waitUntil(
      `run ${runId} to end`,
      async () => {
        last = await this.show(runId);
        return ['succeeded', 'failed', 'cancelled', 'resolved'].includes(last.state);
      },
      ms,
    );
    return last;
  }
}

/** The peak resident memory of a process so far (VmHWM of /proc/<pid>/status), and now (VmRSS), in bytes. */
export function memoryOf(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
  return { peak: kb('VmHWM'), now: kb('VmRSS') };
}

/** Rows of the log at `db`, read the way the stock `sqlite3` shell would. */
export function logRows(db: string): { seq: number; stream: string; type: string; data: Record<string, unknown> }[] {
  const sqlite = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const rows = sqlite.prepare('SELECT seq, stream, type, data FROM events ORDER BY seq').all() as {
      seq: number;
      stream: string;
      type: string;
      data: string;
    }[];
    return rows.map((row) => ({ ...row, data: JSON.parse(row.data) as Record<string, unknown> }));
  } finally {
    sqlite.close();
  }
}

function killAgentsOf(db: string): void {
  if (!existsSync(db)) return;
  let rows: ReturnType<typeof logRows>;
  try {
    rows = logRows(db);
  } catch {
    return;
  }
  for (const row of rows) {
    if (row.type !== 'run.process.began') continue;
    try {
      process.kill(-Number(row.data.pid), 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
