/**
 * Issue 15: every error a user meets names the thing and what to do, exit 2 for a usage or
 * environment error (`runledger --help` says so). Each command through the real entry point at least
 * once; its other refusals in this process, through the same dispatch (test/support/inProcessCli.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type Daemon, startDaemon } from '../../apps/daemon/startDaemon.ts';
import { runCli } from '../e2e/support/cluster.ts';
import { DaemonProcess } from '../support/daemonProcess.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { repoRoot, runledger } from '../support/processes.ts';
import { tempDir } from '../support/tempStore.ts';

const cli = join(repoRoot, 'cli/runledger.js');

/** A board alone, in this process, on a port the system picks: closed when the test ends. */
async function board(db: string): Promise<Daemon> {
  const started = await startDaemon({ db, port: 0, exec: 'true', boardOnly: true });
  onTestFinished(() => started.close());
  return started;
}

/** A port somebody else holds, as a user finds one. */
async function takenPort(): Promise<number> {
  const holder: Server = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  return (holder.address() as { port: number }).port;
}

// The daemon's case of a taken port is test/e2e/portTaken.test.ts.
describe('a taken port', () => {
  it('runledger server --port P with P taken: names the port and --port, exit 2', async () => {
    const port = await takenPort();
    const result = await runCli(['server', '--db', join(tempDir(), 'runledger.db'), '--port', String(port)]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`runledger: port ${port} on 127.0.0.1 is taken`);
    expect(result.stderr).toContain('--port P (--port 0 takes a free one)');
  });
});

describe('a computer whose token the board refuses', () => {
  it('says the board refused the token of that computer, what to do and where the token came from, and stops: exit 2, no endless retry', async () => {
    const dir = tempDir();
    const remote = await board(join(dir, 'board', 'runledger.db'));
    const result = await runCli(
      ['daemon', '--db', join(dir, 'c9', 'runledger.db'), '--server', remote.url!, '--computer', 'c9', '--token', 'not-its-token', '--exec', 'true'],
      20_000,
    );
    expect(result.status).toBe(2);
    expect(result.stdout).toContain(
      `the board at ${remote.url} refused the token of computer c9 (401; this daemon sent the token given with --token)`,
    );
    expect(result.stdout).toContain('`runledger computer add c9`');
    expect(result.stdout).not.toMatch(/push stream disconnected/);
    // Its report is refused alike: said once, not sent again and again for the stop's whole bound.
    expect(result.stdout).not.toContain('did not take its report');
    expect(result.stdout).toMatch(/stopped \(the board refused this computer, exit 2\)/);
  });
});

describe('a submit token of another board', () => {
  it('names the token file it sent and that the board refused it, exit 2', async () => {
    const dir = tempDir();
    const remote = await board(join(dir, 'a', 'runledger.db'));
    const other = join(dir, 'b', 'runledger.db');
    (await board(other)).url;
    // In this process: submit through the real entry point is the prompt's test below.
    const result = await runInProcess(['submit', '--lane', 'x', '--prompt', 'hi', '--server', remote.url!, '--db', other]);
    expect(result).toMatchObject({ status: 2, stdout: '' });
    expect(result.stderr).toContain(`the board at ${remote.url} refused the submit token read from ${join(dir, 'b', 'token')} (401)`);
    expect(result.stderr).toContain('give --db the log of the board at --server');
  });
});

describe('--server without a scheme', () => {
  it.each([
    ['status', '--server', 'localhost:7420'],
    ['submit', '--lane', 'x', '--prompt', 'hi', '--server', '127.0.0.1:7420'],
    ['daemon', '--server', 'localhost:7420', '--computer', 'c1', '--token', 't'],
  ])('runledger %s ...: refused naming the URL it wants, exit 2', async (...args) => {
    // The daemon's refusal through the real entry point; the others' in this process.
    const result = args[0] === 'daemon' ? runledger(args) : await runInProcess(args);
    expect(result.status).toBe(2);
    const given = args[args.indexOf('--server') + 1]!;
    expect(result.stderr).toContain(`--server wants the board's URL with its scheme, e.g. http://${given}, not "${given}"`);
  });
});

describe('a folder given as --db', () => {
  it.each([['audit'], ['audit', 'abcdef12'], ['replay'], ['rebuild']])(
    'runledger %s --db FOLDER: names the path and says it is a folder, exit 2',
    async (...args) => {
      const folder = tempDir();
      const result = await runInProcess([...args, '--db', folder]);
      expect(result).toMatchObject({ status: 2, stdout: '' });
      expect(result.stderr).toContain(`--db ${folder} is a folder, not a log file`);
    },
  );

  it('points at the log inside the folder when there is one', async () => {
    const folder = tempDir();
    expect((await runInProcess(['computer', 'add', 'c1', '--db', join(folder, 'runledger.db')])).status).toBe(0);
    const result = runledger(['replay', '--db', folder]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`e.g. --db ${join(folder, 'runledger.db')}`);
  });

  it('audit RUN on a machine with no log asks the board; one that cannot be reached is named with the log that is not there, exit 2', async () => {
    const home = tempDir();
    const result = await runCli(['audit', 'abcdef12', '--server', 'http://127.0.0.1:9'], 30_000, { env: { XDG_DATA_HOME: home } });
    expect(result).toMatchObject({ status: 2, stdout: '' });
    expect(result.stderr).toContain(`there is no log at ${join(home, 'runledger', 'runledger.db')}`);
    expect(result.stderr).toContain('so the board at http://127.0.0.1:9 was asked: the board at http://127.0.0.1:9 did not answer');
  });
});

describe('the prompt', () => {
  it.each([
    ['submit', '--server', 'http://127.0.0.1:9'],
    ['run', '--dry-run', '--demo'],
  ])('runledger %s --prompt "": one sentence, before anything is sent, exit 2', async (command, ...rest) => {
    const result = await runInProcess([command!, '--lane', 'x', '--prompt', '  ', ...rest]);
    expect(result).toMatchObject({
      status: 2,
      stdout: '',
      stderr: `runledger: the prompt is empty: give it with --prompt TEXT or on stdin (echo TEXT | runledger ${command} ...)\n`,
    });
  });

  it('submit in a terminal says it reads the prompt from stdin, then reads it', async () => {
    // `script` gives the CLI a terminal for stdin, as a user's shell does.
    const child = spawn(
      'script',
      ['-q', '-e', '-c', `${process.execPath} ${cli} submit --lane x --server http://127.0.0.1:9 --token t`, '/dev/null'],
      {
        cwd: repoRoot,
      },
    );
    onTestFinished(() => {
      child.kill('SIGKILL');
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const until = async (pattern: RegExp) => {
      for (let i = 0; i < 150 && !pattern.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toMatch(pattern);
    };
    await until(/reading the prompt from stdin: type it, then Ctrl-D on a line of its own \(or give --prompt TEXT\)/);
    child.stdin.write('what broke?\n');
    await new Promise((r) => setTimeout(r, 200));
    child.stdin.write('\x04');
    await until(/the board at http:\/\/127\.0\.0\.1:9 did not answer/);
    expect(await exited).toBe(2);
  });
});

describe('adopt with no daemon running', () => {
  it('is refused, saying nothing runs on that log to bind it and what to start; nothing recorded, exit 2', async () => {
    const db = join(tempDir(), 'runledger.db');
    const result = await runInProcess(['adopt', 'alice', 'session-1', '--db', db]);
    expect(result).toMatchObject({ status: 2, stdout: '' });
    expect(result.stderr).toContain(`no board runs on ${db}`);
    expect(result.stderr).toContain(`start \`runledger daemon --db ${db}\``);
    expect(existsSync(db)).toBe(false);
  });
});

describe('shutdown narration', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    'on %s the draining line names the computer and the last line says it stopped and what it left',
    async (signal) => {
      const daemon = await DaemonProcess.start(join(tempDir(), 'runledger.db'), ['--exec', 'true']);
      daemon.signal(signal);
      expect((await daemon.exit()).code).toBe(0);
      expect(daemon.output).toMatch(/computer local draining \(shutdown signal\): nothing new starts; no turn is running/);
      const lines = daemon.output.trim().split('\n');
      expect(lines.at(-1)).toMatch(
        /^\d\d:\d\d:\d\d stopped \(shutdown signal, exit 0\): computer local: no turn was running; the board has no unfinished run$/,
      );
    },
  );
});

describe('shutdown narration with a turn running', () => {
  it('a turn stopped at the end of the drain time is counted in the last line', async () => {
    const daemon = await DaemonProcess.start(join(tempDir(), 'runledger.db'), ['--exec', 'sleep 30', '--drain-s', '0']);
    await daemon.submit('alice', 'take your time');
    await daemon.waitForOutput(/local: claimed/);
    daemon.signal('SIGTERM');
    expect((await daemon.exit()).code).toBe(0);
    expect(daemon.output).toMatch(/computer local draining \(shutdown signal\): nothing new starts; 1 running turn\(s\) get 0 s to finish/);
    expect(daemon.output.trim().split('\n').at(-1)).toMatch(
      /stopped \(shutdown signal, exit 0\): computer local: 0 turns finished, 1 turn stopped at the end of the drain time \(completed as failed\); the board has no unfinished run$/,
    );
  });
});

describe('--budget-note', () => {
  it('a plain --exec command: off leaves the prompt as given; on (the default) puts the budget sentence ahead of it', async () => {
    const off = await runInProcess(['run', '--lane', 'x', '--prompt', 'hello', '--dry-run', '--exec', 'cat', '--budget-note', 'off']);
    expect(off).toMatchObject({ status: 0, stdout: 'hello\n' });
    const on = await runInProcess(['run', '--lane', 'x', '--prompt', 'hello', '--dry-run', '--exec', 'cat']);
    expect(on.stdout).toMatch(/^You have about 2 hours for this turn\..*\n\nhello\n$/s);
  });

  it('runledger daemon --budget-note off: the agent gets the prompt as submitted', async () => {
    const db = join(tempDir(), 'runledger.db');
    const daemon = await DaemonProcess.start(db, ['--exec', 'cat', '--budget-note', 'off']);
    const runId = await daemon.submit('alice', 'just this');
    expect(await daemon.terminal(runId)).toMatchObject({ state: 'succeeded', reply: 'just this' });
  });
});
