import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { GitError, gitOk, runGit } from './git.ts';

/** The subject of the commit that keeps what a lane's worktree held uncommitted when it was closed. */
export function closeCommitMessage(lane: string): string {
  return `runledger: uncommitted changes of lane ${lane} at close`;
}

export interface ClosedWorktree {
  readonly path: string;
  readonly branch: string | null;
  /** The commit that kept its uncommitted changes (null: it had none). */
  readonly committed: string | null;
}

/**
 * Removes a lane's worktree and keeps its branch (README "Workspaces in a repository"): whatever it
 * holds uncommitted (untracked files included, ignored ones not) is first committed to its branch, so
 * nothing a turn wrote is lost. Without a git identity configured, the commit is by `runledger`.
 */
export async function closeWorktree(path: string, lane: string): Promise<ClosedWorktree> {
  if (!existsSync(path)) throw new Error(`no worktree at ${path}`);
  const branchRead = await runGit(path, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  const branch = branchRead.code === 0 ? branchRead.stdout.trim() : null;
  const identity =
    (await runGit(path, ['config', 'user.email'])).code === 0 ? [] : ['-c', 'user.name=runledger', '-c', 'user.email=runledger@localhost'];
  await gitOk(path, ['add', '--all', '--', '.']);
  let committed: string | null = null;
  if ((await runGit(path, ['diff', '--cached', '--quiet'])).code === 1) {
    await gitOk(path, [...identity, 'commit', '--quiet', '--no-verify', '-m', closeCommitMessage(lane)]);
    committed = (await gitOk(path, ['rev-parse', 'HEAD'])).trim();
  }
  // From outside the worktree, through the repository it belongs to.
  const common = (await gitOk(path, ['rev-parse', '--path-format=absolute', '--git-common-dir'])).trim();
  try {
    await gitOk(dirname(path), ['--git-dir', common, 'worktree', 'remove', path]);
  } catch (error) {
    if (error instanceof GitError) throw new Error(`the worktree ${path} could not be removed (its branch keeps its work): ${error.message}`);
    throw error;
  }
  return { path, branch, committed };
}
