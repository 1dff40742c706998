import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { builtScript, type Fixture } from './builtScripts.ts';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const cli = fileURLToPath(new URL('../../cli/runledger.js', import.meta.url));

export interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `runledger ARGS` as a user would, through the published entry point (`env` added to this process's). */
export function runledger(args: readonly string[], env: NodeJS.ProcessEnv = {}): CliResult {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 20_000, env: { ...process.env, ...env } });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A TypeScript script of test/fixtures/ in a process of its own, run built (test/support/builtScripts.ts). */
export class Child {
  readonly process: ChildProcessWithoutNullStreams;
  private lines: string[] = [];
  private partial = '';
  private stderr = '';
  private waiters: (() => void)[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(script: Fixture, args: readonly string[]) {
    this.process = spawn(process.execPath, [builtScript(`test/fixtures/${script}`), ...args], { cwd: repoRoot });
    this.process.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.partial + chunk).split('\n');
      this.partial = parts.pop() ?? '';
      this.lines.push(...parts);
      this.notify();
    });
    this.process.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => {
      this.process.on('exit', (code, signal) => {
        this.notify();
        resolve({ code, signal });
      });
    });
  }

  output(): readonly string[] {
    return this.lines;
  }

  errors(): string {
    return this.stderr;
  }

  /** Resolves with the first line of stdout that `match` accepts; fails after `ms` or when the child dies first. */
  waitForLine(match: (line: string) => boolean, ms = 15_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`no matching line from the child within ${ms} ms; stderr: ${this.stderr}`)), ms);
      const check = (): void => {
        const line = this.lines.find(match);
        if (line !== undefined) {
          done(null, line);
          return;
        }
        if (this.process.exitCode !== null || this.process.signalCode !== null) {
          done(new Error(`the child exited (${this.process.exitCode ?? this.process.signalCode}) first; stderr: ${this.stderr}`));
          return;
        }
        this.waiters.push(check);
      };
      const done = (error: Error | null, line?: string): void => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== check);
        if (error) reject(error);
        else resolve(line!);
      };
      check();
    });
  }

  /** Resolves once the child exited; fails (and kills it) after `ms`. */
  async waitForExit(ms = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.kill();
        reject(new Error(`the child did not exit within ${ms} ms; stderr: ${this.stderr}`));
      }, ms);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  send(line: string): void {
    this.process.stdin.write(`${line}\n`);
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill(signal);
  }

  private notify(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }
}

/** Starts a fixture script; it is killed (if still running) when the current test ends. */
export function startChild(script: Fixture, args: readonly string[]): Child {
  const child = new Child(script, args);
  onTestFinished(() => child.kill());
  return child;
}
