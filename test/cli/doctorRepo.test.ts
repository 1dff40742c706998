/**
 * `runledger doctor --repo PATH` (issue 27) with real repositories: the repository is checked as
 * `daemon --repo` takes it (a checkout with a commit, not bare), what its main checkout means for the
 * lanes is said (detached, dirty: warnings), and the agent's checks run in a scratch worktree of it
 * that is gone afterwards. The real Codex, against a local stand-in of its model API, passes there
 * without `--skip-git-repo-check`, and is refused outside a repository: through the built bin, in
 * the environment it is given. The others run in this process (the same dispatch), what the checks
 * say being what they prove.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../e2e/support/cluster.ts';
import { type ModelApis, startModelApis } from '../fixtures/agents/modelApis.ts';
import { realAgentBin } from '../fixtures/agents/realAgents.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import type { CliResult } from '../support/processes.ts';
import { tempDir } from '../support/tempStore.ts';
import { git, makeRepo } from '../workspace/support.ts';

interface CheckView {
  readonly check: string;
  readonly status: 'ok' | 'warning' | 'failed' | 'skipped';
  readonly detail: string;
  readonly fix?: string;
}

/** `runledger doctor --db DIR/state/runledger.db ARGS --json` with `env` laid over: its exit and checks. */
async function doctor(dir: string, args: readonly string[], env: Record<string, string>) {
  return checked(await runCli(['doctor', '--db', join(dir, 'state', 'runledger.db'), ...args, '--json'], 45_000, { env, cwd: dir }));
}

/** The same in this process, for a call that needs no environment or folder of its own. */
async function doctorInProcess(dir: string, args: readonly string[]) {
  return checked(await runInProcess(['doctor', '--db', join(dir, 'state', 'runledger.db'), ...args, '--json']));
}

function checked(run: CliResult) {
  expect(run.stderr).toBe('');
  const checks = (JSON.parse(run.stdout) as { checks: CheckView[] }).checks;
  return { status: run.status, checks, of: (name: string) => checks.find((c) => c.check === name) };
}

/** `path`, once `make` has made it. */
function made(path: string, make: (path: string) => unknown): string {
  make(path);
  return path;
}

const statuses = (checks: readonly CheckView[]) => Object.fromEntries(checks.map((c) => [c.check, c.status]));

describe('runledger doctor --repo', () => {
  it('given a detached, dirty checkout, then it warns what that means, runs the agent in a scratch worktree, and leaves nothing behind', async () => {
    const dir = tempDir();
    const repo = makeRepo(dir);
    git(repo, 'checkout', '-q', '--detach');
    writeFileSync(join(repo, 'README.md'), 'edited, not committed\n');
    const branches = git(repo, 'branch', '--list');
    // A plain command whose answer is the folder it ran in: the top of the worktree it was given.
    const run = await doctorInProcess(dir, ['--repo', repo, '--exec', 'git rev-parse --show-toplevel']);
    expect(run.status, JSON.stringify(run.checks)).toBe(0);
    expect(statuses(run.checks)).toEqual({
      repository: 'ok',
      checkout: 'warning',
      worktree: 'ok',
      program: 'ok',
      answer: 'ok',
      session: 'ok',
      resume: 'skipped',
    });
    expect(run.of('checkout')!.detail).toContain(`its HEAD is detached at ${git(repo, 'rev-parse', 'HEAD').slice(0, 12)}`);
    expect(run.of('checkout')!.detail).toContain('the main checkout has 1 uncommitted change: lanes start from HEAD');
    expect(run.of('checkout')!.fix).toContain('--base REF');
    const scratch = /made a scratch worktree at (\S+) /.exec(run.of('worktree')!.detail)?.[1];
    expect(scratch).toBeDefined();
    expect(run.of('answer')!.detail).toContain(`plain text: "${scratch}"`);
    // The worktree is gone and unregistered; no branch was made; the main checkout is as it was.
    expect(existsSync(scratch!)).toBe(false);
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(git(repo, 'branch', '--list')).toBe(branches);
    expect(git(repo, 'status', '--porcelain')).toBe('M README.md');
    expect(readdirSync(dir).sort()).toEqual(['app']);
  });

  it.each([
    {
      what: 'a folder that is no repository',
      make: (dir: string) => made(join(dir, 'plain'), (path) => mkdirSync(path)),
      said: "is not a git repository's checkout",
      fix: 'clone',
    },
    { what: 'a path that does not exist', make: (dir: string) => join(dir, 'nowhere'), said: 'no such folder', fix: 'checkout' },
    {
      what: 'a bare repository',
      make: (dir: string) => made(join(dir, 'bare.git'), (path) => git(dir, 'init', '-q', '--bare', path)),
      said: 'is a bare repository',
      fix: 'git clone',
    },
    {
      what: 'a repository with no commit',
      make: (dir: string) => made(join(dir, 'empty'), (path) => git(dir, 'init', '-q', path)),
      said: 'has no commit yet',
      fix: 'make a first commit',
    },
  ])('given $what, then the repository check fails naming it and what to do, the agent is not run, exit 1', async ({ make, said, fix }) => {
    const dir = tempDir();
    const path = make(dir);
    const run = await doctorInProcess(dir, ['--repo', path, '--exec', 'claude']);
    expect(run.status).toBe(1);
    expect(statuses(run.checks)).toEqual({ repository: 'failed', program: 'skipped', answer: 'skipped', session: 'skipped', resume: 'skipped' });
    expect(run.of('repository')).toMatchObject({ detail: expect.stringContaining(said), fix: expect.stringContaining(fix) });
    expect(run.of('repository')!.detail).toContain(path);
  });

  describe('the real Codex', () => {
    let apis: ModelApis;
    beforeAll(async () => {
      apis = await startModelApis();
    });
    afterAll(() => apis.close());

    it('given --repo, then it answers and resumes in the scratch worktree without --skip-git-repo-check; without it, the fix names --repo', async () => {
      const dir = tempDir();
      const repo = makeRepo(dir);
      const { env } = realAgentBin(dir, apis);
      const inRepo = await doctor(dir, ['--repo', repo, '--exec', 'codex'], env);
      expect(inRepo.status, JSON.stringify(inRepo.checks)).toBe(0);
      expect(statuses(inRepo.checks)).toEqual({
        repository: 'ok',
        checkout: 'ok',
        worktree: 'ok',
        program: 'ok',
        answer: 'ok',
        session: 'ok',
        resume: 'ok',
        sandbox: 'warning',
      });
      expect(inRepo.of('sandbox')).toMatchObject({
        detail: "its sandbox is read-only (codex exec's default): it can read the lane's worktree but not edit it",
        fix: expect.stringContaining('-s workspace-write'),
      });
      expect(inRepo.of('checkout')!.detail).toMatch(/^on main at [0-9a-f]{12}, nothing uncommitted/);
      expect(inRepo.of('answer')!.detail).toContain('"heard: ping"');
      expect(inRepo.of('resume')!.detail).toContain('"heard: again"');

      const outside = await doctor(dir, ['--exec', 'codex'], env);
      expect(outside.status).toBe(1);
      expect(outside.of('answer')).toMatchObject({
        status: 'failed',
        detail: expect.stringContaining('Not inside a trusted directory and --skip-git-repo-check was not specified'),
        fix: expect.stringContaining('--repo PATH'),
      });
    });
  });
});
