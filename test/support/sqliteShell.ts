import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { waitUntil } from './daemonProcess.ts';
import { whenTestEnds } from './testScope.ts';

/**
 * The stock `sqlite3` shell inside a transaction on a log, as a user leaves one open: `write` holds
 * the write lock (`BEGIN IMMEDIATE`), `read` a read transaction (`BEGIN` and a SELECT: its snapshot).
 * Killed when the test ends if still open.
 */
export class SqliteShell {
  private out = '';
  private readonly shell: ChildProcessWithoutNullStreams;
  private readonly exited: Promise<void>;

  private constructor(db: string) {
    this.shell = spawn('sqlite3', [db]);
    this.shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (this.out += chunk));
    this.shell.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.out += chunk));
    this.exited = new Promise((resolve) => this.shell.on('exit', () => resolve()));
    whenTestEnds(() => void this.shell.kill('SIGKILL'));
  }

  /** Resolves once the shell is inside its transaction (it waits up to 5 s for the log's own commits to end). */
  static async open(db: string, hold: 'write' | 'read'): Promise<SqliteShell> {
    const shell = new SqliteShell(db);
    const begin = hold === 'write' ? 'BEGIN IMMEDIATE;' : 'BEGIN; SELECT count(*) FROM events;';
    shell.shell.stdin.write(`.timeout 5000\n${begin}\nSELECT 'transaction open';\n`);
    await waitUntil(`the sqlite3 shell to open its ${hold} transaction`, () => {
      if (/Error/.test(shell.out)) throw new Error(`sqlite3 could not begin: ${shell.out}`);
      return shell.out.includes('transaction open');
    });
    return shell;
  }

  get pid(): number {
    return this.shell.pid!;
  }

  /** Ends the transaction and the shell. */
  async close(): Promise<void> {
    this.shell.stdin.end('COMMIT;\n.quit\n');
    await this.exited;
  }
}
