/**
 * Bad inputs around the lanes' worktrees (README "Workspaces in a repository"): each is a clear error
 * naming the thing, and the daemon goes on serving the other lanes and repositories.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRepositories } from '../../adapters/git/repositories.ts';
import { type BoardProcess, checkLogs, runCli, waitFor } from '../e2e/support/cluster.ts';
import { tempDir } from '../support/tempStore.ts';
import { GIT_AGENT, git, makeRepo, post, startRepoDaemon, turn } from './support.ts';

/**
 * One daemon for the tests that need one running, a repository of its own for each (app and lib, det,
 * half): a test moves, detaches or half-breaks only its own, and its lanes are its own.
 */
let dir: string;
let db: string;
let daemon: BoardProcess;
const repos = { app: '', lib: '', det: '', half: '', detHead: '' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runledger-test-'));
  db = join(dir, 'home', 'runledger.db');
  repos.app = makeRepo(dir, 'app');
  repos.lib = makeRepo(dir, 'lib');
  // A detached, dirty main checkout: what the daemon says of it as it starts.
  repos.det = makeRepo(dir, 'det');
  git(repos.det, 'checkout', '-q', '--detach');
  writeFileSync(join(repos.det, 'README.md'), 'edited, not committed\n');
  repos.detHead = git(repos.det, 'rev-parse', 'HEAD');
  repos.half = makeRepo(dir, 'half');
  // app first: the default repository of a run that names none.
  daemon = await startRepoDaemon(db, [repos.app, repos.lib, repos.det, repos.half], ['--slots', '2'], { shared: true });
  await daemon.process.waitForOutput(/push stream connected/);
});

afterAll(async () => {
  await daemon?.process.stop('SIGTERM');
  if (daemon) await checkLogs([db]);
  rmSync(dir, { recursive: true, force: true });
});

describe('bad inputs around worktrees', () => {
  it('a --repo that is no repository, or one with no commit, refuses to start (exit 2) naming it', async () => {
    const dir = tempDir();
    const plain = join(dir, 'plain');
    mkdirSync(plain);
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    git(empty, 'init', '-q');
    const db = join(dir, 'runledger.db');
    const notRepo = await runCli(['daemon', '--db', db, '--port', '0', '--exec', GIT_AGENT, '--repo', `app=${plain}`]);
    expect(notRepo.status).toBe(2);
    expect(notRepo.stderr).toContain(`--repo app=${plain} is not a git repository's checkout`);
    // Nothing was started: no log was made.
    expect(existsSync(db)).toBe(false);
    // The other refusals come from the same check, before anything starts: their words, without a daemon process each.
    const refusal = (path: string) =>
      checkRepositories([{ name: 'app', path }]).then(
        () => 'accepted',
        (error: Error) => error.message,
      );
    expect(await refusal(join(dir, 'nowhere'))).toContain(`${join(dir, 'nowhere')}: no such folder`);
    expect(await refusal(empty)).toContain('the repository has no commit yet');
  });

  it('a detached, dirty main checkout: the daemon starts, says what that means for the lanes and what to do; a lane starts from its HEAD', async () => {
    const { det, detHead } = repos;
    expect(daemon.process.stderr).toContain(`repository det (${det}) is detached at ${detHead.slice(0, 12)}: its HEAD is detached`);
    expect(daemon.process.stderr).toContain('the main checkout has 1 uncommitted change: lanes start from HEAD');
    expect(daemon.process.stderr).toContain('commit what the lanes should see');
    const first = await turn(daemon, { lane: 'd', prompt: 'look', repo: 'det' });
    expect(first).toMatchObject({ state: 'succeeded' });
    expect(first.changes?.base).toBe(detHead);
  });

  it('an unknown repository is refused naming it; a missing base ref, a repository moved away: each run fails naming it, and the other lanes go on', async () => {
    const { app, lib } = repos;

    // The board checks the fields' form: 422 naming the field.
    const badBase = await post(daemon, { lane: 'x', prompt: 'p', base: '--upload-pack=evil' });
    expect(badBase.status).toBe(422);
    expect(JSON.stringify(badBase.body)).toContain('base');
    const badRepo = await post(daemon, { lane: 'x', prompt: 'p', repo: '../etc' });
    expect(badRepo.status).toBe(422);
    expect(JSON.stringify(badRepo.body)).toContain('repo');

    // A repository its computer did not announce: refused at once, naming it (a run never fails for it later).
    const unknown = await post(daemon, { lane: 'u', prompt: 'write a.txt a', repo: 'nope' });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({
      detail: {
        error: 'unknown_repo',
        message: expect.stringContaining('no computer of this board has repository nope (its computers have app, det, half, lib)'),
      },
    });
    const noBase = await turn(daemon, { lane: 'b', prompt: 'write a.txt a', base: 'no-such-branch' });
    expect(noBase).toMatchObject({ state: 'failed' });
    expect(noBase.error).toContain('the base ref "no-such-branch" does not exist in repository app');
    // Neither touched the repository: no branch, no worktree.
    expect(git(app, 'branch', '--list', 'runledger/*')).toBe('');

    // A base that exists: the lane's branch starts there.
    git(app, 'checkout', '-q', '-b', 'feature');
    writeFileSync(join(app, 'feature.txt'), 'f\n');
    git(app, 'add', '-A');
    git(app, 'commit', '-q', '-m', 'feature');
    git(app, 'checkout', '-q', 'main');
    const fromFeature = await turn(daemon, { lane: 'f', prompt: 'look', base: 'feature' });
    expect(fromFeature.reply).toContain('files=README.md,feature.txt');
    expect(fromFeature.changes?.base).toBe(git(app, 'rev-parse', 'feature'));

    // lib is moved away under the running daemon: its lane's turn fails naming it; app's lanes go on.
    renameSync(lib, join(dir, 'lib-moved'));
    const [moved, fine] = await Promise.all([
      turn(daemon, { lane: 'm', prompt: 'write a.txt a', repo: 'lib' }),
      turn(daemon, { lane: 'ok', prompt: 'write a.txt a' }),
    ]);
    expect(moved).toMatchObject({ state: 'failed' });
    expect(moved.error).toContain(`repository lib is no longer at ${lib} (moved or deleted while the daemon runs)`);
    expect(fine).toMatchObject({ state: 'succeeded' });

    // app moved during a turn: what the turn changed cannot be read, and the turn fails naming it.
    const laneTree = join(dir, 'home', 'workspaces', 'local', 'app.worktrees', 'during');
    const release = join(dir, 'release-during');
    const during = turn(daemon, { lane: 'during', prompt: `write started.txt x\nawait ${release}` });
    await waitFor('the agent to start', () => existsSync(join(laneTree, 'started.txt')));
    renameSync(app, join(dir, 'app-moved'));
    // The turn ends once the repository is gone, whatever the machine's load.
    writeFileSync(release, '');
    const cut = await during;
    expect(cut).toMatchObject({ state: 'failed' });
    expect(cut.error).toContain(`repository app is no longer at ${app}`);
    renameSync(join(dir, 'app-moved'), app);
    expect(await turn(daemon, { lane: 'during', prompt: 'look' })).toMatchObject({ state: 'succeeded' });
  });

  it('a worktree left half-made (its folder gone, a stray folder in its place, still "initializing"), or a branch made earlier: repaired or reused at the next turn', async () => {
    const app = repos.half;
    const trees = join(dir, 'home', 'workspaces', 'local', 'half.worktrees');
    // A branch from an earlier life (or another computer, or a person): the lane goes on from it.
    git(app, 'branch', 'runledger/old', 'main');
    git(app, 'worktree', 'add', '-q', join(dir, 'elsewhere'), 'runledger/old');
    writeFileSync(join(dir, 'elsewhere', 'old.txt'), 'old\n');
    git(join(dir, 'elsewhere'), 'add', '-A');
    git(join(dir, 'elsewhere'), 'commit', '-q', '-m', 'old work');
    git(app, 'worktree', 'remove', join(dir, 'elsewhere'));
    expect((await turn(daemon, { lane: 'old', prompt: 'look', repo: 'half' })).reply).toContain('branch=runledger/old files=README.md,old.txt');

    // Its folder deleted: the stale registration is pruned and the worktree made again, on the lane's branch.
    expect(await turn(daemon, { lane: 'gone', prompt: 'write g.txt g\ncommit g', repo: 'half' })).toMatchObject({ state: 'succeeded' });
    rmSync(join(trees, 'gone'), { recursive: true, force: true });
    const again = await turn(daemon, { lane: 'gone', prompt: 'look', repo: 'half' });
    expect(again.reply).toContain('files=README.md,g.txt');

    // A folder git does not know in its place: set aside, never deleted.
    mkdirSync(join(trees, 'stray'), { recursive: true });
    writeFileSync(join(trees, 'stray', 'keep.txt'), 'someone’s\n');
    expect((await turn(daemon, { lane: 'stray', prompt: 'look', repo: 'half' })).reply).toContain('files=README.md');
    expect(existsSync(join(trees, 'stray.unregistered', 'keep.txt'))).toBe(true);

    // A crash inside `git worktree add`: registered, locked "initializing", its checkout unfinished.
    git(app, 'worktree', 'add', '-q', '-b', 'runledger/crash', join(trees, 'crash'), 'main');
    writeFileSync(join(app, '.git', 'worktrees', 'crash', 'locked'), 'initializing');
    rmSync(join(trees, 'crash', 'README.md'));
    const repaired = await turn(daemon, { lane: 'crash', prompt: 'look', repo: 'half' });
    expect(repaired.reply).toContain('files=README.md');
    expect(repaired.changes).toMatchObject({ files_changed: 0 });
  });
});
