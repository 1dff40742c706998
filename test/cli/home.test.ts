/**
 * Issue 26: one home, found from any folder. Every command finds the log the same way (`--db` >
 * `RUNLEDGER_DB` > `$RUNLEDGER_HOME/runledger.db` > the user's data folder), its tokens beside it; a
 * log at the former default (./.runledger/runledger.db) is still used where it exists, saying so; the
 * board and the tokens come from the environment, so no secret has to be typed on a command line.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseLog } from '../../cli/shared/home.ts';
import { runCli, startCli } from '../e2e/support/cluster.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';

const nothing = () => false;

describe('the log a command finds', () => {
  it('is --db, else RUNLEDGER_DB, else $RUNLEDGER_HOME/runledger.db, else the user data folder: $XDG_DATA_HOME/runledger, else ~/.local/share/runledger', () => {
    const env = { RUNLEDGER_DB: '/d/x.db', RUNLEDGER_HOME: '/h', XDG_DATA_HOME: '/x', HOME: '/home/u' };
    expect(chooseLog('given.db', env, '/cwd', nothing)).toEqual({ db: 'given.db', how: 'given with --db', note: null });
    expect(chooseLog(undefined, env, '/cwd', nothing)).toMatchObject({ db: '/d/x.db', how: 'from RUNLEDGER_DB=/d/x.db' });
    expect(chooseLog(undefined, { ...env, RUNLEDGER_DB: '' }, '/cwd', nothing)).toMatchObject({
      db: '/h/runledger.db',
      how: 'from RUNLEDGER_HOME=/h',
    });
    expect(chooseLog(undefined, { XDG_DATA_HOME: '/x', HOME: '/home/u' }, '/cwd', nothing)).toMatchObject({
      db: '/x/runledger/runledger.db',
      note: null,
    });
    // A relative XDG_DATA_HOME is to be ignored (the XDG base directory rules).
    expect(chooseLog(undefined, { XDG_DATA_HOME: 'rel', HOME: '/home/u' }, '/cwd', nothing)).toMatchObject({
      db: '/home/u/.local/share/runledger/runledger.db',
      how: 'the default home in ~/.local/share, as none of RUNLEDGER_DB, RUNLEDGER_HOME, XDG_DATA_HOME is set',
    });
  });

  it('is the former default ./.runledger/runledger.db where it exists and no RUNLEDGER_DB or RUNLEDGER_HOME says otherwise, with a line saying so', () => {
    const exists = (path: string) => path === '/work/.runledger/runledger.db';
    const former = chooseLog(undefined, { XDG_DATA_HOME: '/x' }, '/work', exists);
    expect(former).toMatchObject({
      db: '/work/.runledger/runledger.db',
      how: 'the former default, ./.runledger/runledger.db of the current folder, which exists',
    });
    expect(former.note).toContain('set RUNLEDGER_HOME=/work/.runledger');
    expect(chooseLog(undefined, { RUNLEDGER_HOME: '/h' }, '/work', exists).db).toBe('/h/runledger.db');
    expect(chooseLog('other.db', {}, '/work', exists).db).toBe('other.db');
  });
});

/** A user's environment: a home of their own, no XDG_DATA_HOME unless given. */
function userEnv(home: string, more: Record<string, string> = {}): Record<string, string> {
  return { HOME: home, XDG_DATA_HOME: '', ...more };
}

function folder(path: string): string {
  mkdirSync(path, { recursive: true });
  return path;
}

describe('one home, found from any folder', () => {
  it('given a daemon started with no --db, then submit, show and status typed in another folder with no --db or --token find its board and token', async () => {
    const dir = tempDir();
    const home = join(dir, 'home');
    // A computer token in the environment is for joining a board: a daemon with a board of its own ignores it.
    const daemon = startCli(
      ['daemon', '--port', '0', '--exec', 'cat'],
      userEnv(home, { RUNLEDGER_COMPUTER_TOKEN: 'not-for-this' }),
      folder(join(dir, 'a')),
    );
    await daemon.waitForOutput(/push stream connected/);
    const url = /board listening on (http:\/\/\S+)/.exec(daemon.stdout)![1]!;
    expect(daemon.stdout).toContain(`(log ${join(home, '.local/share/runledger/runledger.db')})`);
    expect(existsSync(join(home, '.local/share/runledger/token'))).toBe(true);

    const elsewhere = { env: userEnv(home, { RUNLEDGER_SERVER: url }), cwd: folder(join(dir, 'b')) };
    const submitted = await runCli(['submit', '--lane', 'alice', '--prompt', 'hello'], 20_000, elsewhere);
    expect(submitted.status, submitted.stderr).toBe(0);
    const runId = submitted.stdout.trim();
    const shown = await runCli(['show', runId, '--follow', '--json'], 20_000, elsewhere);
    expect(shown.status, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout.trim().split('\n').at(-1)!)).toMatchObject({ state: 'succeeded', reply: expect.stringContaining('hello') });
    const status = await runCli(['status', '--json'], 20_000, elsewhere);
    expect(status.status, status.stderr).toBe(0);
    expect(await runCli(['computer', 'list'], 20_000, elsewhere)).toMatchObject({ status: 0, stdout: expect.stringContaining('local') });
    expect((await daemon.stop()).code, daemon.describe()).toBe(0);
  });

  it('given no token where the log was chosen, then submit names the file it looked for and how that log was chosen, exit 2', async () => {
    const dir = tempDir();
    const board = { RUNLEDGER_SERVER: 'http://127.0.0.1:9' };
    const byHome = await runCli(['submit', '--lane', 'a', '--prompt', 'x'], 20_000, {
      env: userEnv(join(dir, 'h'), { ...board, RUNLEDGER_HOME: join(dir, 'rh') }),
    });
    expect(byHome.status).toBe(2);
    expect(byHome.stderr).toContain(
      `runledger: no submit token at ${join(dir, 'rh', 'token')} (beside the log ${join(dir, 'rh', 'runledger.db')}, from RUNLEDGER_HOME=${join(dir, 'rh')}): no board has started on that log.`,
    );
    expect(byHome.stderr).toContain('--token T or RUNLEDGER_TOKEN');
    const byDefault = await runCli(['submit', '--lane', 'a', '--prompt', 'x'], 20_000, {
      env: userEnv(join(dir, 'h'), board),
      cwd: folder(join(dir, 'c')),
    });
    expect(byDefault.status).toBe(2);
    expect(byDefault.stderr).toContain(
      `no submit token at ${join(dir, 'h/.local/share/runledger/token')} (beside the log ${join(dir, 'h/.local/share/runledger/runledger.db')}, the default home in ~/.local/share, as none of RUNLEDGER_DB, RUNLEDGER_HOME, XDG_DATA_HOME is set)`,
    );
  });

  it('given a log at the former default ./.runledger/runledger.db, then a command run in that folder uses it and says so; with RUNLEDGER_HOME set, the home is used', async () => {
    const dir = tempDir();
    const project = folder(join(dir, 'project'));
    const former = join(project, '.runledger', 'runledger.db');
    // A set-up step, in this process (the same dispatch): the commands run in that folder are what is tested.
    expect((await runInProcess(['computer', 'add', 'c1', '--db', former])).status).toBe(0);

    const used = await runCli(['computer', 'list'], 20_000, { env: userEnv(join(dir, 'h')), cwd: project });
    expect(used.status, used.stderr).toBe(0);
    expect(used.stdout).toContain('c1');
    expect(used.stderr).toBe(
      `runledger: using the log at ${former}, the former default (./.runledger/runledger.db of the current folder); the default is now ${join(dir, 'h/.local/share/runledger/runledger.db')}. To use this one from any folder, set RUNLEDGER_HOME=${join(project, '.runledger')}\n`,
    );
    const home = join(dir, 'elsewhere');
    const notUsed = await runCli(['computer', 'list'], 20_000, { env: userEnv(join(dir, 'h'), { RUNLEDGER_HOME: home }), cwd: project });
    expect(notUsed.status).toBe(2);
    expect(notUsed.stderr).toContain(`there is no log at ${join(home, 'runledger.db')}`);
  });
});

describe('a computer joining a board, its token kept out of ps', () => {
  it('given --token-file or RUNLEDGER_COMPUTER_TOKEN, then it connects, and its command line holds no token; a missing file is named, exit 2', async () => {
    const dir = tempDir();
    const board = startCli(['daemon', '--db', join(dir, 'board', 'runledger.db'), '--port', '0', '--exec', 'cat']);
    await board.waitForOutput(/push stream connected/);
    const url = /board listening on (http:\/\/\S+)/.exec(board.stdout)![1]!;
    const added = await runInProcess(['computer', 'add', 'c2', '--db', join(dir, 'board', 'runledger.db'), '--json']);
    const { token } = JSON.parse(added.stdout) as { token: string };
    const tokenFile = join(dir, 'c2.token');
    writeFileSync(tokenFile, `${token}\n`);
    chmodSync(tokenFile, 0o600);
    const join2 = ['daemon', '--db', join(dir, 'c2', 'runledger.db'), '--server', url, '--computer', 'c2', '--exec', 'cat'];

    const fromFile = startCli([...join2, '--token-file', tokenFile]);
    await fromFile.waitForOutput(/push stream connected/);
    expect(readFileSync(`/proc/${fromFile.child.pid}/cmdline`, 'utf8')).not.toContain(token);
    expect((await fromFile.stop()).code, fromFile.describe()).toBe(0);

    const fromEnv = startCli(join2, { RUNLEDGER_COMPUTER_TOKEN: token });
    await fromEnv.waitForOutput(/push stream connected/);
    expect((await fromEnv.stop()).code, fromEnv.describe()).toBe(0);

    const missing = await runCli([...join2, '--token-file', join(dir, 'nope.token')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`runledger: --token-file ${join(dir, 'nope.token')}: cannot read it (`);
    expect((await board.stop()).code).toBe(0);
  }, 40_000);
});
