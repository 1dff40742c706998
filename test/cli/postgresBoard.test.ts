import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonProcess, waitUntil } from '../support/daemonProcess.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { freshPostgresLog } from '../support/postgresLog.ts';
import { repoRoot, runledger } from '../support/processes.ts';
import { ServerProcess } from '../support/serverProcess.ts';
import { tempDbPath } from '../support/tempStore.ts';

const json = <T>(stdout: string): T => JSON.parse(stdout) as T;

/** `runledger ARGS` to its end without blocking the loop, so several run side by side. */
function runAsync(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'cli/runledger.js'), ...args],
      { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        if (status === null) reject(error);
        else resolve({ status, stdout, stderr });
      },
    );
  });
}
const ECHO = `/bin/sh ${join(repoRoot, 'test/fixtures/agents/echo.sh')}`;

describe('a board on PostgreSQL, through the CLI (docs/rules.md#postgresql-board)', () => {
  it('given runledger server --db URL, then token add prints a token once, submit takes it by --token or RUNLEDGER_TOKEN (none by file), a computer runs the run, and replay, rebuild and audit exit 0 on the URL', async () => {
    const url = await freshPostgresLog();
    // The suite's one `token` through the real entry point; the file's others run in this process.
    const added = runledger(['token', 'add', 'ci', '--db', url, '--json']);
    expect(added.status, added.stderr).toBe(0);
    const { name, token } = json<{ name: string; token: string }>(added.stdout);
    expect(name).toBe('ci');
    const board = await ServerProcess.start(['--db', url]);
    expect(board.output).not.toMatch(/password|\*\*\*/);
    const computer = json<{ token: string }>((await runInProcess(['computer', 'add', 'c1', '--db', url, '--json'])).stdout);
    await DaemonProcess.start(tempDbPath(), ['--server', board.url, '--computer', 'c1', '--token', computer.token, '--exec', ECHO]);

    // The submit taking its token from the environment is a process of its own (runInProcess has no
    // environment of the call's own); the others run in this process, through the same dispatch.
    const [tokenless, byFlag, byEnv, wrong] = await Promise.all([
      runInProcess(['submit', '--server', board.url, '--db', url, '--lane', 'a', '--prompt', 'hi']),
      runInProcess(['submit', '--server', board.url, '--db', url, '--token', token, '--lane', 'a', '--prompt', 'first']),
      runAsync(['submit', '--server', board.url, '--db', url, '--lane', 'b', '--prompt', 'second'], { RUNLEDGER_TOKEN: token }),
      runInProcess(['submit', '--server', board.url, '--token', 'not-a-token', '--lane', 'a', '--prompt', 'x']),
    ]);

    expect(tokenless.status).toBe(2);
    expect(tokenless.stderr).toMatch(
      /a board on PostgreSQL .* keeps no token file: pass --token T or set RUNLEDGER_TOKEN \(`runledger token add NAME --db URL`/,
    );
    expect(byFlag.status, byFlag.stderr).toBe(0);
    expect(byEnv.status, byEnv.stderr).toBe(0);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toMatch(/refused the submit token given with --token or RUNLEDGER_TOKEN \(401\)/);
    const runs = [byFlag.stdout.trim(), byEnv.stdout.trim()];
    await waitUntil('both runs to succeed', async () =>
      (await Promise.all(runs.map(async (run) => (await (await fetch(`${board.url}/v1/runs/${run}`)).json()) as { state: string }))).every(
        (view) => view.state === 'succeeded',
      ),
    );

    // The everyday commands read a board on PostgreSQL as any other: its runs, a lane's conversation.
    const listed = await runInProcess(['runs', '--server', board.url, '--db', url, '--json']);
    const conversation = await runInProcess(['lane', 'a', '--server', board.url, '--db', url, '--json']);
    expect(listed.status, listed.stderr).toBe(0);
    const rows = json<{ run_id: string; state: string; computer_id?: string; duration_ms?: number }[]>(listed.stdout);
    expect(rows.map((row) => row.run_id).sort()).toEqual([...runs].sort());
    expect(
      rows.every((row) => row.state === 'succeeded' && row.computer_id === 'c1' && row.duration_ms !== undefined),
      listed.stdout,
    ).toBe(true);
    expect(conversation.status, conversation.stderr).toBe(0);
    expect(json<{ run_id: string; prompt: string }[]>(conversation.stdout)).toEqual([expect.objectContaining({ run_id: runs[0], prompt: 'first' })]);

    const replay = await runInProcess(['replay', '--db', url]);
    const rebuild = await runInProcess(['rebuild', '--db', url]);
    const audit = await runInProcess(['audit', runs[0]!, '--db', url]);
    const summary = await runInProcess(['audit', '--db', url, '--json']);
    expect([replay.status, rebuild.status, audit.status], replay.stdout + replay.stderr + rebuild.stderr + audit.stderr).toEqual([0, 0, 0]);
    expect(replay.stdout).toMatch(/recorded decisions agree/);
    expect(audit.stdout).toMatch(/submitted to lane a/);
    expect(audit.stdout).toMatch(/c1/);
    // The log holds the token's hash, never the token.
    expect(summary.stdout).not.toContain(token);
  });

  it('given a token name already added, when added again, then it is refused naming the log, and the first still works', async () => {
    const url = await freshPostgresLog();
    const first = await runInProcess(['token', 'add', 'alice', '--db', url, '--json']);
    const again = await runInProcess(['token', 'add', 'alice', '--db', url]);

    expect(first.status).toBe(0);
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/has a submit token named alice already .*give the new one another name/);
    expect(again.stderr).toContain(url.slice(0, url.indexOf('?')));
  });

  it('given a postgres:// URL, then runledger daemon (a computer, whose log is a file) refuses it, naming what to run instead, and writes nothing', async () => {
    const url = await freshPostgresLog();

    const result = runledger(['daemon', '--port', '0'], { RUNLEDGER_DB: url });

    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(
      /runledger daemon runs a computer, whose log is a SQLite file: run the board on PostgreSQL with `runledger server --db URL`/,
    );
    expect((await runInProcess(['replay', '--db', url])).stderr).toMatch(/no events table/);
  });
});

// One board for the file's tests: each adds a token of its own name and submits to a lane of its own.
describe('submit tokens on a SQLite board', () => {
  // The board's folder is the file's, as the board is: made in beforeAll, removed in afterAll once the board is killed
  // (tempDir() hangs its removal on a test).
  let folder = '';
  let db = '';
  let daemon: DaemonProcess;
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'runledger-test-'));
    db = join(folder, 'runledger.db');
    daemon = await DaemonProcess.start(db, ['--exec', ECHO], { sharedByFile: true });
  });
  afterAll(() => {
    daemon?.kill();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('given runledger token add on the log of a running board, then the board takes the new token at once, beside its token file', async () => {
    const added = json<{ token: string }>((await runInProcess(['token', 'add', 'bob', '--db', db, '--json'])).stdout);
    const submitted = await runInProcess(['submit', '--server', daemon.url, '--token', added.token, '--lane', 'b', '--prompt', 'hi']);
    const byFile = await runInProcess(['submit', '--server', daemon.url, '--db', db, '--lane', 'b', '--prompt', 'hi again']);

    expect(submitted.status, submitted.stderr).toBe(0);
    expect(byFile.status, byFile.stderr).toBe(0);
  });

  it('given runledger token revoke on the log of a running board, then the board refuses that token within its poll of the log, its token file still works, and the name stays taken', async () => {
    const added = json<{ token: string }>((await runInProcess(['token', 'add', 'carol', '--db', db, '--json'])).stdout);
    expect((await runInProcess(['submit', '--server', daemon.url, '--token', added.token, '--lane', 'c', '--prompt', 'before'])).status).toBe(0);

    const revoked = await runInProcess(['token', 'revoke', 'carol', '--db', db]);
    // The running board reads another process's append within its poll of the log.
    let refused = { status: 0 as number | null, stderr: '' };
    await waitUntil('the revoked token refused', async () => {
      refused = await runInProcess(['submit', '--server', daemon.url, '--token', added.token, '--lane', 'c', '--prompt', 'after']);
      return refused.status !== 0;
    });
    const byFile = await runInProcess(['submit', '--server', daemon.url, '--db', db, '--lane', 'c', '--prompt', 'by file']);
    const again = await runInProcess(['token', 'revoke', 'carol', '--db', db]);
    const unknown = await runInProcess(['token', 'revoke', 'dave', '--db', db]);
    const reused = await runInProcess(['token', 'add', 'carol', '--db', db]);

    expect(revoked.status, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain('submit token carol revoked');
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/401|token/);
    expect(byFile.status, byFile.stderr).toBe(0);
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/submit token carol is revoked already/);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/has no submit token named dave: `runledger token add dave` makes one/);
    expect(reused.status).toBe(2);
  });
});
