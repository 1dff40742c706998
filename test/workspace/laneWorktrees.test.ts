/**
 * Each lane works in its own worktree of the team's repository (README "Workspaces in a repository"),
 * and what each turn changed is on the record: real repositories, the real daemon, a real agent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLogs, eventsOf, readLog, waitForTerminal } from '../e2e/support/cluster.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';
import { git, makeRepo, startRepoDaemon, submitRun, turn } from './support.ts';

describe('lanes in worktrees of a repository', () => {
  it('two lanes edit and commit at once, each in its own worktree; a later turn sees the first’s work; changes are recorded', async () => {
    const dir = tempDir();
    const repo = makeRepo(dir);
    const db = join(dir, 'home', 'runledger.db');
    const daemon = await startRepoDaemon(db, [`app=${repo}`], ['--slots', '2']);
    await daemon.process.waitForOutput(/push stream connected/);

    // Two lanes start together: their worktrees are made at once, on one repository.
    const [a, b] = await Promise.all([
      submitRun(daemon, { lane: 'alice', prompt: 'write a.txt from alice\ncommit alice adds a', repo: 'app' }),
      submitRun(daemon, { lane: 'bob', prompt: 'write b.txt from bob\ncommit bob adds b' }),
    ]);
    const [runA, runB] = await Promise.all([waitForTerminal(daemon.url, a), waitForTerminal(daemon.url, b)]);
    expect(runA, daemon.process.describe()).toMatchObject({ state: 'succeeded' });
    expect(runB).toMatchObject({ state: 'succeeded' });
    const aliceTree = join(dir, 'home', 'workspaces', 'local', 'app.worktrees', 'alice');
    expect(runA.reply).toContain(`cwd=${aliceTree} branch=runledger/alice files=README.md,a.txt`);
    expect(runB.reply).toContain('branch=runledger/bob files=README.md,b.txt');
    const first = git(repo, 'rev-parse', 'main');
    const changesA = (runA as unknown as { changes: Record<string, unknown> }).changes;
    expect(changesA).toMatchObject({ base: first, files_changed: 1, insertions: 1, deletions: 0, commit_count: 1, uncommitted_files: 0 });
    expect(changesA.commits).toEqual([{ sha: git(repo, 'rev-parse', 'runledger/alice'), subject: 'alice adds a' }]);
    // The main checkout is untouched: its branch, its files.
    expect(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect(existsSync(join(repo, 'a.txt'))).toBe(false);

    // The lane's next turn is in the same worktree, on top of its first: it leaves a change uncommitted.
    const second = await turn(daemon, { lane: 'alice', prompt: 'write notes.md work in progress' });
    expect(second.reply).toContain('files=README.md,a.txt,notes.md');
    expect(second.changes).toMatchObject({
      base: git(repo, 'rev-parse', 'runledger/alice'),
      head: git(repo, 'rev-parse', 'runledger/alice'),
      files_changed: 1,
      insertions: 1,
      commit_count: 0,
      commits: [],
      uncommitted_files: 1,
    });
    // A turn that changed nothing says so.
    const third = await turn(daemon, { lane: 'bob', prompt: 'just look' });
    expect(third.changes).toMatchObject({ files_changed: 0, commit_count: 0, uncommitted_files: 0 });

    // The diff is in the log, with the exit that recorded the changes; the audit says what each turn changed.
    const log = readLog(db);
    const exits = eventsOf(log, 'run.process.exited', second.runId);
    expect((exits[0]!.data.changes as { diff: string }).diff).toContain('+work in progress');
    expect(readFileSync(join(aliceTree, 'notes.md'), 'utf8')).toBe('work in progress\n');
    expect(eventsOf(log, 'run.workspace.prepared').map((e) => e.data.made)).toEqual(expect.arrayContaining([true, true, false, false]));
    // `show --diff` prints it; `audit` says what each turn changed, and that one changed nothing.
    const shown = await runInProcess(['show', second.runId.slice(0, 8), '--diff', '--db', db, '--server', daemon.url]);
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('+++ b/notes.md');
    expect(shown.stderr).toContain('1 file changed (+1 −0), 1 left uncommitted');
    // `show` for a person says it among the run's facts.
    const facts = await runInProcess(['show', second.runId.slice(0, 8), '--db', db, '--server', daemon.url]);
    expect(facts.stdout).toMatch(/\nchanges +1 file changed \(\+1 −0\), 1 left uncommitted \(show --diff prints it\)\n/);
    const audited = await runInProcess(['audit', second.runId, '--db', db]);
    expect(audited.stdout).toContain('in its worktree the turn 1 file changed (+1 −0), 1 left uncommitted');
    expect((await runInProcess(['audit', third.runId, '--db', db])).stdout).toContain('in its worktree the turn changed nothing');
    expect((await runInProcess(['audit', a, '--db', db])).stdout).toContain('in its worktree the turn 1 commit, 1 file changed (+1 −0)');
    await daemon.process.stop('SIGTERM');
    await checkLogs([db]);
  });
});
