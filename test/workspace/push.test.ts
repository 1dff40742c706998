/**
 * `--push` (README "Workspaces in a repository"): a lane's branch goes to origin after each turn that
 * committed to it, and a computer new to the lane starts its worktree from origin's branch, so a lane
 * moves between computers without losing work. Real clones of a local bare origin, two real computers.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addComputer, checkLogs, eventsOf, readLog, runCli, startBoard, startComputer } from '../e2e/support/cluster.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';
import { GIT_AGENT, GIT_IDENTITY, git, makeRepo, turn } from './support.ts';

describe('--push', () => {
  it('a lane’s branch is pushed after a turn that committed, and the lane continues on a second computer from origin', async () => {
    const dir = tempDir();
    const seed = makeRepo(dir, 'seed');
    const origin = join(dir, 'origin.git');
    git(dir, 'init', '-q', '--bare', '-b', 'main', origin);
    git(seed, 'push', '-q', origin, 'main');
    git(dir, 'clone', '-q', origin, join(dir, 'a'));
    git(dir, 'clone', '-q', origin, join(dir, 'b'));
    const board = await startBoard(join(dir, 'board', 'board.db'));
    const [t1, t2] = await Promise.all([addComputer(board.db, 'c1'), addComputer(board.db, 'c2')]);
    const agent = { markers: join(dir, 'markers'), pids: join(dir, 'pids'), env: GIT_IDENTITY };
    const computer = (id: string, token: string, clone: string) =>
      startComputer({ dir, id, server: board.url, token, agent, args: ['--exec', GIT_AGENT, '--repo', `app=${clone}`, '--push'] });

    const c1 = await computer('c1', t1, join(dir, 'a'));
    const first = await turn(board, { lane: 'L', prompt: 'write a.txt one\ncommit one' });
    expect(first, c1.process.describe()).toMatchObject({ state: 'succeeded', computer_id: 'c1' });
    expect(git(origin, 'rev-parse', 'runledger/L')).toBe(first.changes?.head);
    // A turn that committed nothing pushes nothing.
    const looked = await turn(board, { lane: 'L', prompt: 'look' });
    expect(eventsOf(readLog(c1.db), 'run.branch.push.requested', looked.runId)).toEqual([]);
    expect(eventsOf(readLog(c1.db), 'run.branch.pushed', first.runId)[0]?.data).toMatchObject({ ok: true });
    await c1.process.stop('SIGTERM');

    // From a laptop (no log of its own, the board's URL and token given) `show --diff` prints the diff
    // the remote computer recorded: the board keeps the copy of c1's events it reported. In this process,
    // through the same dispatch: the board's answer is what is tested.
    const laptop = ['--server', board.url, '--token', board.token, '--db', join(dir, 'laptop', 'runledger', 'runledger.db')];
    const diff = await runInProcess(['show', first.runId.slice(0, 8), '--diff', ...laptop]);
    expect(diff, diff.stderr).toMatchObject({ status: 0 });
    expect(diff.stdout).toContain('+one');
    expect(diff.stderr).toContain('1 commit, 1 file changed (+1 −0)');
    expect(diff.stderr).toContain('repository app');
    // `audit` from the laptop: the board's log with c1's reported events, as on the board's machine.
    // A process of its own: audit asks the board only when no --db is given and the log the environment
    // names is not there, so the environment is the laptop's.
    const audited = await runCli(['audit', first.runId.slice(0, 8)], 30_000, {
      env: { RUNLEDGER_SERVER: board.url, RUNLEDGER_TOKEN: board.token, XDG_DATA_HOME: join(dir, 'laptop') },
      cwd: dir,
    });
    expect(audited, audited.stderr).toMatchObject({ status: 0 });
    expect(audited.stdout).toContain(`run ${first.runId}:`);
    expect(audited.stdout).toMatch(/c1 +run\.process\.exited +.*1 commit, 1 file changed/);
    // A turn that changed nothing: its summary says so.
    const plain = await runInProcess(['show', looked.runId, '--diff', '--json', ...laptop]);
    expect(JSON.parse(plain.stdout)).toMatchObject({ run_id: looked.runId, changes: { files_changed: 0 } });

    // The lane moves to c2, which has never run it: its worktree starts from origin's branch.
    const c2 = await computer('c2', t2, join(dir, 'b'));
    const second = await turn(board, { lane: 'L', prompt: 'write b.txt two\ncommit two' });
    expect(second, c2.process.describe()).toMatchObject({ state: 'succeeded', computer_id: 'c2' });
    expect(second.reply).toContain('files=README.md,a.txt,b.txt');
    expect(second.changes).toMatchObject({ base: first.changes?.head, commit_count: 1 });
    expect(git(origin, 'rev-parse', 'runledger/L^')).toBe(first.changes?.head);
    expect(git(origin, 'rev-parse', 'runledger/L')).toBe(second.changes?.head);
    expect(eventsOf(readLog(c2.db), 'run.workspace.prepared', second.runId)[0]?.data).toMatchObject({ made: true, from: 'origin/runledger/L' });
    await c2.process.stop('SIGTERM');
    await board.process.stop('SIGTERM');
    await checkLogs([board.db, c1.db, c2.db]);
  });
});
