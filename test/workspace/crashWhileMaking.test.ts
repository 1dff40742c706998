/**
 * A daemon SIGKILLed while it makes a lane's worktree (README "Workspaces in a repository"): the next
 * start makes it again or finds it made, and the run goes on: the worktree's answer is recorded at
 * least once, and nothing was run before it.
 */
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLogs, eventsOf, readLog, waitFor, waitForTerminal } from '../e2e/support/cluster.ts';
import { tempDir } from '../support/tempStore.ts';
import { makeRepo, startRepoDaemon, submitRun } from './support.ts';

describe('a crash while a worktree is made', () => {
  it('SIGKILL during `git worktree add`: the next start finishes it and runs the turn, once', async () => {
    const dir = tempDir();
    const app = makeRepo(dir, 'app');
    const marker = join(dir, 'checking-out');
    // git runs post-checkout as the last step of `worktree add`: it holds the add open long enough to kill the daemon in it.
    writeFileSync(join(app, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\n: > "${marker}"\nsleep 2\n`);
    chmodSync(join(app, '.git', 'hooks', 'post-checkout'), 0o755);
    const db = join(dir, 'home', 'runledger.db');
    const first = await startRepoDaemon(db, [`app=${app}`]);
    await first.process.waitForOutput(/push stream connected/);
    const runId = await submitRun(first, { lane: 'alice', prompt: 'write a.txt a\ncommit a' });
    await waitFor('git worktree add to be under way', () => existsSync(marker));
    first.process.kill('SIGKILL');
    await first.process.exited;
    expect(eventsOf(readLog(db), 'run.workspace.prepared', runId)).toEqual([]);

    const second = await startRepoDaemon(db, [`app=${app}`]);
    const run = await waitForTerminal(second.url, runId, 25_000);
    expect(run, second.process.describe()).toMatchObject({ state: 'succeeded' });
    expect(run.reply).toContain('branch=runledger/alice files=README.md,a.txt');
    const log = readLog(db);
    expect(eventsOf(log, 'run.workspace.prepared', runId)).toHaveLength(1);
    expect(eventsOf(log, 'run.process.began', runId)).toHaveLength(1);
    await second.process.stop('SIGTERM');
    await checkLogs([db]);
  });
});
