import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { runGit } from '../../adapters/git/git.ts';
import { checkRepository, readCheckout } from '../../adapters/git/repositories.ts';
import { messageOf } from '../../events/thrown.ts';

/**
 * `runledger doctor --repo PATH`: the repository checked as `daemon --repo` will find it, and a scratch
 * worktree of it for the agent's checks to run in, as a lane's turn runs in its own. The worktree is
 * detached (no branch is made, so nothing is left in the repository) and removed afterwards.
 */

export interface RepoFinding {
  readonly check: 'repository' | 'checkout' | 'worktree';
  readonly status: 'ok' | 'warning' | 'failed';
  readonly detail: string;
  readonly fix?: string;
}

export interface RepoChecked {
  readonly findings: RepoFinding[];
  /** The repository's checkout, absolute; null when it is none the daemon would take. */
  readonly top: string | null;
}

/** The repository, as `daemon --repo` checks it, and what its main checkout means for the lanes. */
export async function checkRepo(path: string): Promise<RepoChecked> {
  const absolute = resolve(path);
  if (existsSync(absolute) && (await runGit(absolute, ['rev-parse', '--is-bare-repository'])).stdout.trim() === 'true')
    return failed(
      `${absolute} is a bare repository: it has no checkout whose HEAD new lanes start from`,
      `give the folder of a clone (git clone ${absolute} <folder>), or of a checkout that has the team's branches`,
    );
  let top: string;
  try {
    top = (await checkRepository('doctor', absolute)).path;
  } catch (error) {
    const said = messageOf(error).replace(/^--repo doctor=/, '--repo ');
    const [detail, fix] = said.split(/;\s+(?=[^;]*$)/);
    return failed(detail ?? said, fix ?? 'give the folder of a git clone that has a commit');
  }
  const findings: RepoFinding[] = [{ check: 'repository', status: 'ok', detail: `${top}: a git checkout with commits` }];
  const { at, warnings, fixes } = await readCheckout(top);
  findings.push(
    warnings.length === 0
      ? { check: 'checkout', status: 'ok', detail: `${at}, nothing uncommitted: new lanes start from it` }
      : { check: 'checkout', status: 'warning', detail: warnings.join('; '), fix: fixes.join('; ') },
  );
  return { findings, top };
}

function failed(detail: string, fix: string): RepoChecked {
  return { findings: [{ check: 'repository', status: 'failed', detail, fix }], top: null };
}

/**
 * A detached worktree of the repository at `path`, at its HEAD: the folder the agent's checks run in.
 * Returns the finding; the worktree is made only when it is ok.
 */
export async function addScratchWorktree(top: string, path: string): Promise<RepoFinding> {
  const added = await runGit(top, ['worktree', 'add', '--detach', path, 'HEAD']);
  if (added.code !== 0)
    return {
      check: 'worktree',
      status: 'failed',
      detail: `a worktree of ${top} could not be made at ${path}: ${added.stderr.split('\n').filter(Boolean).at(-1) ?? 'git said nothing'}`,
      fix: "the daemon makes each lane's worktree the same way (git worktree add): run it by hand to see why it fails",
    };
  return {
    check: 'worktree',
    status: 'ok',
    detail: `made a scratch worktree at ${path} (detached, removed afterwards): the checks below ran in it, as a lane's turn runs in its own`,
  };
}

/** The scratch worktree removed and unregistered, whatever the agent left in it. */
export async function removeScratchWorktree(top: string, path: string): Promise<void> {
  await runGit(top, ['worktree', 'remove', '--force', '--force', path]);
  await runGit(top, ['worktree', 'prune']);
}
