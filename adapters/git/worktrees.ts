import { existsSync, mkdirSync, readdirSync, realpathSync, renameSync, rmdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { laneBranch } from '../../events/workspace.ts';
import { GitError, gitOk, onRepository, runGit } from './git.ts';
import type { Repository } from './repositories.ts';

/**
 * A lane's worktree of a repository (README "Workspaces in a repository"): made on the lane's first
 * turn on this computer, on the branch `runledger/<lane>`, and kept for its later turns. Everything
 * here runs on the repository's queue (`onRepository`): one git command on it at a time in this process.
 */

export { laneBranch };

/**
 * Where a lane's worktree of `repo` is: beside the lanes' plain folders, under a folder whose name no
 * lane can have (ids hold no `.`), so the two never meet.
 */
export function worktreePath(workspaceRoot: string, repo: string, lane: string): string {
  return resolve(workspaceRoot, `${repo}.worktrees`, lane);
}

/** A failure a person can act on: the run fails with this message. */
export class WorkspaceError extends Error {}

export interface PreparedWorktree {
  readonly path: string;
  readonly branch: string;
  /** Its HEAD before the turn: what the turn's changes are read against. */
  readonly head: string;
  /** Made now (else kept from an earlier turn). */
  readonly made: boolean;
  /** What a new worktree started from, in words (`HEAD (1a2b3c4d5e6f)`, `origin/runledger/alice`). */
  readonly from?: string;
  /** What a crash had left that was set right first. */
  readonly repaired?: string;
}

export interface PrepareRequest {
  readonly lane: string;
  readonly path: string;
  /** Where a new branch starts (the run's `base`); HEAD of the repository's checkout when absent. */
  readonly base?: string;
  /** `--push`: a lane whose branch is on `origin` continues from there (fetched first). */
  readonly fromOrigin?: boolean;
}

export function prepareWorktree(repo: Repository, request: PrepareRequest): Promise<PreparedWorktree> {
  return onRepository(repo.gitDir, async () => {
    await stillThere(repo);
    const branch = laneBranch(request.lane);
    const baseSha = request.base === undefined ? null : await commitOf(repo, request.base);
    if (request.base !== undefined && baseSha === null)
      throw new WorkspaceError(
        `the base ref "${request.base}" does not exist in repository ${repo.name} (${repo.path}): fetch it there, or submit with a --base that does`,
      );
    const repairs: string[] = [];
    const entry = (await listWorktrees(repo)).find((e) => samePath(e.path, request.path));
    if (entry && existsSync(request.path)) {
      if (entry.locked?.startsWith('initializing')) {
        // `git worktree add` was cut before its checkout finished (a crash): nothing ran in it yet.
        await git(repo, ['worktree', 'remove', '--force', '--force', request.path]);
        repairs.push('a worktree left half-made by a crash (still "initializing") was removed and made again');
      } else {
        const head = await gitOk(request.path, ['rev-parse', '--verify', 'HEAD^{commit}']);
        return { path: request.path, branch: entry.branch ?? 'a detached HEAD', head: head.trim(), made: false };
      }
    } else if (entry) {
      // Registered, but its folder is gone (deleted, or a crash before the checkout): the registration goes.
      await runGit(repo.path, ['worktree', 'unlock', request.path]);
      await git(repo, ['worktree', 'prune']);
      repairs.push('its registration was left without its folder: pruned');
    } else if (existsSync(request.path)) {
      repairs.push(setAside(request.path));
    }
    mkdirSync(dirname(request.path), { recursive: true });
    const from = await addWorktree(repo, request, branch, baseSha);
    const head = (await gitOk(request.path, ['rev-parse', '--verify', 'HEAD^{commit}'])).trim();
    return { path: request.path, branch, head, made: true, from, ...(repairs.length ? { repaired: repairs.join('; ') } : {}) };
  });
}

/** Adds the worktree on the lane's branch: the existing one, else the one on `origin`, else a new one from the base. */
async function addWorktree(repo: Repository, request: PrepareRequest, branch: string, baseSha: string | null): Promise<string> {
  const ref = `refs/heads/${branch}`;
  const add = async (args: string[], what: string) => {
    const answer = await runGit(repo.path, ['worktree', 'add', ...args]);
    if (answer.code !== 0)
      throw new WorkspaceError(
        `the worktree of lane ${request.lane} in repository ${repo.name} could not be made at ${request.path} (${what}): ${answer.stderr.split('\n').filter(Boolean).at(-1) ?? 'git said nothing'}`,
      );
  };
  if ((await runGit(repo.path, ['rev-parse', '--verify', '--quiet', ref])).code === 0) {
    // An earlier life of this computer, another computer sharing the repository, or a user: the lane goes on from it.
    await add([request.path, branch], `on its existing branch ${branch}`);
    return `its existing branch ${branch}`;
  }
  if (request.fromOrigin) {
    const fetched = await runGit(repo.path, ['fetch', '--quiet', 'origin', `+${ref}:refs/remotes/origin/${branch}`]);
    if (fetched.code === 0) {
      await add(['--track', '-b', branch, request.path, `refs/remotes/origin/${branch}`], `from origin/${branch}`);
      return `origin/${branch}`;
    }
    // Not on origin yet: a lane new to every computer. Anything else (no origin, no network) would fork the lane.
    if (!/couldn't find remote ref/i.test(fetched.stderr))
      throw new WorkspaceError(
        `the lane's branch could not be looked up on origin of repository ${repo.name} (${repo.path}), so the lane would lose what other computers pushed: ${fetched.stderr.split('\n').filter(Boolean).at(-1) ?? 'git said nothing'}`,
      );
  }
  const start = baseSha ?? (await commitOf(repo, 'HEAD'));
  if (start === null) throw new WorkspaceError(`repository ${repo.name} (${repo.path}) has no commit to start lane ${request.lane} from`);
  await add(['-b', branch, request.path, start], `a new branch ${branch}`);
  return `${request.base ?? 'HEAD'} (${start.slice(0, 12)})`;
}

/** A folder in the worktree's place that git does not know: kept aside, never deleted (it may hold someone's work). */
function setAside(path: string): string {
  if (readdirSync(path).length === 0) {
    rmdirSync(path);
    return 'an empty folder was in its place: removed';
  }
  let aside = `${path}.unregistered`;
  for (let n = 2; existsSync(aside); n++) aside = `${path}.unregistered-${n}`;
  renameSync(path, aside);
  return `a folder git did not know as a worktree was in its place: moved to ${aside}`;
}

/** The repository is where the daemon found it at start: else the turn fails, naming it. */
async function stillThere(repo: Repository): Promise<void> {
  const answer = existsSync(repo.path) ? await runGit(repo.path, ['rev-parse', '--path-format=absolute', '--git-common-dir']) : null;
  if (answer?.code !== 0 || answer.stdout.trim() !== repo.gitDir)
    throw new WorkspaceError(
      `repository ${repo.name} is no longer at ${repo.path} (moved or deleted while the daemon runs): put it back, or restart the daemon with --repo ${repo.name}=<where it is now>`,
    );
}

async function commitOf(repo: Repository, rev: string): Promise<string | null> {
  const answer = await runGit(repo.path, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  return answer.code === 0 ? answer.stdout.trim() : null;
}

async function git(repo: Repository, args: string[]): Promise<string> {
  try {
    return await gitOk(repo.path, args);
  } catch (error) {
    if (error instanceof GitError) throw new WorkspaceError(`in repository ${repo.name} (${repo.path}): ${error.message}`);
    throw error;
  }
}

interface WorktreeEntry {
  readonly path: string;
  readonly branch: string | null;
  readonly locked: string | null;
}

/** `git worktree list --porcelain`: each worktree's folder, branch and lock reason. */
export async function listWorktrees(repo: Repository): Promise<WorktreeEntry[]> {
  const text = await git(repo, ['worktree', 'list', '--porcelain']);
  const entries: WorktreeEntry[] = [];
  for (const block of text.split('\n\n')) {
    let path: string | null = null;
    let branch: string | null = null;
    let locked: string | null = null;
    for (const line of block.split('\n')) {
      if (line.startsWith('worktree ')) path = line.slice('worktree '.length);
      else if (line.startsWith('branch ')) branch = line.slice('branch '.length).replace(/^refs\/heads\//, '');
      else if (line === 'locked' || line.startsWith('locked ')) locked = line.slice('locked'.length).trim() || 'locked';
    }
    if (path !== null) entries.push({ path, branch, locked });
  }
  return entries;
}

function samePath(a: string, b: string): boolean {
  return canonical(a) === canonical(b);
}

/** A path with its existing part's symlinks resolved (git prints worktrees' real paths). */
function canonical(path: string): string {
  const absolute = resolve(path);
  let existing = absolute;
  const rest: string[] = [];
  while (!existsSync(existing) && dirname(existing) !== existing) {
    rest.unshift(existing.slice(dirname(existing).length + 1));
    existing = dirname(existing);
  }
  return join(realpathSync(existing), ...rest);
}

/**
 * `--push`: the lane's branch to the repository's `origin`, as it is in the repository (whatever the
 * worktree has checked out). Never forced: a branch another computer moved meanwhile is refused by
 * origin, and that is said, not overwritten.
 */
export function pushBranch(repo: Repository, branch: string): Promise<{ ok: boolean; detail: string }> {
  return onRepository(repo.gitDir, async () => {
    const ref = `refs/heads/${branch}`;
    const sha = await runGit(repo.path, ['rev-parse', '--verify', '--quiet', ref]);
    if (sha.code !== 0) return { ok: false, detail: `repository ${repo.name} (${repo.path}) has no branch ${branch}` };
    const pushed = await runGit(repo.path, ['push', '--quiet', '--porcelain', 'origin', `${ref}:${ref}`]);
    if (pushed.code !== 0)
      return {
        ok: false,
        detail: `git push origin ${branch} failed in repository ${repo.name}: ${pushed.stderr.split('\n').filter(Boolean).slice(-2).join(' ') || 'git said nothing'}`,
      };
    return { ok: true, detail: `${branch} at ${sha.stdout.trim().slice(0, 12)}` };
  });
}
