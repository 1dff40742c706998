/**
 * Computers holding different repositories (docs/rules.md#workspaces): each announces its `--repo`s when
 * it connects, a run goes to a computer that has its repository, and a name none of them has is
 * refused at submission. A real board, two real computers, real git repositories.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addComputer, checkLogs, connectedComputers, getRun, startBoard, startComputer, waitFor, waitForTerminal } from '../e2e/support/cluster.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';
import { GIT_AGENT, GIT_IDENTITY, git, makeRepo, post, submitRun } from './support.ts';

describe('repositories across computers', () => {
  it('a run goes to the computer that has its repository, one none online has waits saying why, and one none has is refused 422 naming it', async () => {
    const dir = tempDir();
    const app = makeRepo(dir, 'app');
    const lib = makeRepo(dir, 'lib');
    const board = await startBoard(join(dir, 'board', 'board.db'));
    const [t1, t2] = await Promise.all([addComputer(board.db, 'c1'), addComputer(board.db, 'c2')]);
    const agent = { markers: join(dir, 'markers'), pids: join(dir, 'pids'), env: GIT_IDENTITY };
    const computer = (id: string, token: string, repo: string) =>
      startComputer({ dir, id, server: board.url, token, agent, args: ['--exec', GIT_AGENT, '--repo', repo] });
    const [c1, c2] = await Promise.all([computer('c1', t1, `app=${app}`), computer('c2', t2, `lib=${lib}`)]);
    await waitFor('both computers connected', async () => (await connectedComputers(board.url)) === 2);

    // lib's run first: c1 comes first by name and is as free as c2, yet has no lib.
    const inLib = await submitRun(board, { lane: 'L', prompt: 'write l.txt l\ncommit adds l', repo: 'lib' });
    const inApp = await submitRun(board, { lane: 'A', prompt: 'write a.txt a\ncommit adds a', repo: 'app' });
    const [libRun, appRun] = await Promise.all([waitForTerminal(board.url, inLib), waitForTerminal(board.url, inApp)]);
    const describe = () => `${c1.process.describe()}\n${c2.process.describe()}`;
    expect(libRun, describe()).toMatchObject({ state: 'succeeded', computer_id: 'c2' });
    expect(appRun, describe()).toMatchObject({ state: 'succeeded', computer_id: 'c1' });
    expect(git(lib, 'log', '-1', '--format=%s', 'runledger/L')).toBe('adds l');
    expect(git(app, 'log', '-1', '--format=%s', 'runledger/A')).toBe('adds a');
    const listed = await runInProcess(['computer', 'list', '--db', board.db, '--json']);
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { computer_id: 'c1', connected: true, repos: ['app'] },
      { computer_id: 'c2', connected: true, repos: ['lib'] },
    ]);

    // A name neither computer announced: refused at once, naming it, what they have and what to do.
    const refused = await post(board, { lane: 'N', prompt: 'p', repo: 'nope' });
    expect(refused).toEqual({
      status: 422,
      body: {
        detail: {
          error: 'unknown_repo',
          message:
            'no computer of this board has repository nope (its computers have app, lib): start a computer with --repo nope=PATH, or submit with one of those',
        },
      },
    });
    // Typed, the same words (in this process: the exit status of a refused submit as a shell sees it is test/cli's).
    const typed = await runInProcess(['submit', '--server', board.url, '--token', board.token, '--lane', 'N', '--prompt', 'p', '--repo', 'nope']);
    expect(typed.status).toBe(2);
    expect(typed.stderr).toContain('no computer of this board has repository nope (its computers have app, lib)');

    // lib's computer stops: lib is still the board's, and a run for it waits, saying why.
    await c2.process.stop('SIGTERM');
    await waitFor('c2 offline', async () => (await connectedComputers(board.url)) === 1);
    const waiting = await submitRun(board, { lane: 'W', prompt: 'look', repo: 'lib' });
    expect(await getRun(board.url, waiting)).toMatchObject({ state: 'queued' });
    const audit = await runInProcess(['audit', waiting, '--db', board.db]);
    expect(audit.stdout).toContain('offered to nobody yet: no computer online has repository lib');

    await c1.process.stop('SIGTERM');
    await board.process.stop('SIGTERM');
    await checkLogs([board.db, c1.db, c2.db]);
  });
});
