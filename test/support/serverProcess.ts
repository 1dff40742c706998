import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { waitUntil } from './daemonProcess.ts';
import { exitOf } from './exitOf.ts';
import { repoRoot } from './processes.ts';

const cli = join(repoRoot, 'cli/runledger.js');

/**
 * `runledger server` as a user starts it (the board alone, on a port the system picks), resolved once
 * it listens; SIGKILLed when the test ends if still alive.
 */
export class ServerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private out = '';

  private constructor(args: readonly string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, [cli, 'server', '--port', '0', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.out += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.out += chunk));
    this.exited = exitOf(this.child);
  }

  static async start(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<ServerProcess> {
    const server = new ServerProcess(args, env);
    onTestFinished(() => server.signal('SIGKILL'));
    await waitUntil(
      'the server to listen',
      () => {
        if (/board listening on /.test(server.out)) return true;
        if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`the server exited first:\n${server.out}`);
        return false;
      },
      15_000,
    );
    return server;
  }

  get output(): string {
    return this.out;
  }

  /** The board's address, from its first line. */
  get url(): string {
    const match = /board listening on (http:\/\/\S+)/.exec(this.out);
    if (!match) throw new Error(`the server named no address: ${this.out}`);
    return match[1]!;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }
}
