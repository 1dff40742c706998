/**
 * `runledger lane close LANE` (README "Workspaces in a repository"): the lane's worktree goes, its
 * branch stays, and what it held uncommitted is committed to the branch first; refused while a turn of
 * the lane is under way. The lane's next turn makes its worktree again, on the same branch. The two
 * cases wait on turns and the daemon's rounds, each with a repository and a daemon of its own: they run
 * at once (describe.concurrent).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { checkLogs, runCli, waitFor } from '../e2e/support/cluster.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';
import { ownScope } from '../support/testScope.ts';
import { git, makeRepo, startRepoDaemon, submitRun, turn } from './support.ts';

describe.concurrent('lane close', () => {
  it(
    'commits what the worktree holds uncommitted, removes it, keeps the branch; refused while a turn runs',
    ownScope(async ({ expect }) => {
      const dir = tempDir();
      const app = makeRepo(dir, 'app');
      const db = join(dir, 'home', 'runledger.db');
      const tree = join(dir, 'home', 'workspaces', 'local', 'app.worktrees', 'alice');
      const daemon = await startRepoDaemon(db, [`app=${app}`]);
      await daemon.process.waitForOutput(/push stream connected/);
      expect(await turn(daemon, { lane: 'alice', prompt: 'write done.txt done\ncommit done\nwrite wip.txt half' })).toMatchObject({
        state: 'succeeded',
      });

      // While a turn of the lane runs, the close is refused, naming the run.
      const release = join(dir, 'release');
      const running = await submitRun(daemon, { lane: 'alice', prompt: `write started.txt x\nawait ${release}` });
      await waitFor('the turn to start', () => existsSync(join(tree, 'started.txt')));
      const refused = await runCli(['lane', 'close', 'alice', '--db', db]);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain(`lane alice has a run under way on computer local (run ${running}`);
      writeFileSync(release, '');
      // Tried again until the turn has ended: in this process, as a process a try would cost a third of a second of CPU.
      await waitFor('the turn to end', async () => (await runInProcess(['lane', 'close', 'alice', '--db', db])).status === 0, 20_000, 100);

      expect(existsSync(tree)).toBe(false);
      expect(git(app, 'worktree', 'list')).not.toContain('alice');
      expect(git(app, 'log', '-1', '--format=%s', 'runledger/alice')).toBe('runledger: uncommitted changes of lane alice at close');
      expect(git(app, 'show', 'runledger/alice:wip.txt')).toBe('half');
      // The lane goes on from its branch, in a worktree made again.
      const again = await turn(daemon, { lane: 'alice', prompt: 'look' });
      expect(again.reply).toContain('files=README.md,done.txt,started.txt,wip.txt');
      expect((await runInProcess(['lane', 'close', 'nobody', '--db', db])).stderr).toContain('lane nobody has no worktree');
      await daemon.process.stop('SIGTERM');
      await checkLogs([db]);
    }),
  );

  it(
    '--worktree-idle-days: a lane idle that long has its worktree closed by the daemon, its branch kept; its next turn goes on',
    ownScope(async ({ expect }) => {
      const dir = tempDir();
      const app = makeRepo(dir, 'app');
      const db = join(dir, 'home', 'runledger.db');
      const tree = join(dir, 'home', 'workspaces', 'local', 'app.worktrees', 'bob');
      // About 0.9 s: the daemon looks every second.
      const daemon = await startRepoDaemon(db, [`app=${app}`], ['--worktree-idle-days', '0.00001']);
      await daemon.process.waitForOutput(/push stream connected/);
      expect(await turn(daemon, { lane: 'bob', prompt: 'write wip.txt half' })).toMatchObject({ state: 'succeeded' });
      await daemon.process.waitForOutput(/lane bob: idle since .* its worktree .* was closed: its uncommitted changes committed/, 20_000);
      expect(existsSync(tree)).toBe(false);
      expect(git(app, 'show', 'runledger/bob:wip.txt')).toBe('half');
      expect((await turn(daemon, { lane: 'bob', prompt: 'look' })).reply).toContain('files=README.md,wip.txt');
      await daemon.process.stop('SIGTERM');
    }),
  );
});
