import * as z from 'zod';
import { BASE_REF, BASE_REF_RULE } from './baseRef.ts';
import { SafeId } from './safeId.ts';

/**
 * A lane's worktree of one of the team's repositories, and what a turn changed in it (README
 * "Workspaces in a repository"). A repository is named as an id is (`--repo NAME=PATH`): its name
 * names a folder of worktrees.
 */
export const RepoName = SafeId;
export const BaseRef = z.string().regex(BASE_REF, `must be a git revision: ${BASE_REF_RULE}`);
/** How many repositories a computer may announce (`daemon --repo`, repeated). */
export const MAX_REPOS = 100;

/**
 * The repositories a computer has (`daemon --repo`), as it announces them when its push stream connects
 * (docs/rules.md#workspaces): their names, and the one that serves a run naming none (null: it has none).
 */
export const RepoAnnouncement = z.strictObject({ names: z.array(RepoName).max(MAX_REPOS), default: RepoName.nullable() });
export type RepoAnnouncement = z.infer<typeof RepoAnnouncement>;

/** A commit id as git prints it (SHA-1, or SHA-256 in a repository made so). */
export const CommitSha = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'must be a full commit id');

/** The diff a turn left is kept up to this many bytes in the log; a longer one is cut, saying so. */
export const MAX_DIFF_BYTES = 1024 * 1024;
/** The commits a turn made are listed up to this many (its count says how many there were). */
export const MAX_COMMITS_LISTED = 200;

const Commit = z.strictObject({ sha: CommitSha, subject: z.string().max(1000) });

/**
 * What a turn changed, against the worktree's HEAD before it began (`base`): its commits, and the
 * files that differ between `base` and what the worktree holds at its end, committed or not.
 * `uncommittedFiles`: of those, the ones whose change is not committed (what a close would commit).
 */
export const ChangeSummary = z.strictObject({
  base: CommitSha,
  head: CommitSha,
  filesChanged: z.number().int().nonnegative(),
  insertions: z.number().int().nonnegative(),
  deletions: z.number().int().nonnegative(),
  commits: z.array(Commit).max(MAX_COMMITS_LISTED),
  /** How many commits the turn made (more than `commits` lists when it made over MAX_COMMITS_LISTED). */
  commitCount: z.number().int().nonnegative(),
  uncommittedFiles: z.number().int().nonnegative(),
});
export type ChangeSummary = z.infer<typeof ChangeSummary>;

/**
 * The summary with the diff itself, as git gave it when the turn ended: `diff` is `git diff base`
 * of the worktree's whole state (untracked files included), up to MAX_DIFF_BYTES; `diffBytes` its
 * whole length, so a cut diff says how much is missing.
 */
export const TurnChanges = ChangeSummary.extend({
  repo: RepoName,
  diff: z.string().max(MAX_DIFF_BYTES + 1024),
  diffBytes: z.number().int().nonnegative(),
  diffCut: z.boolean(),
});
export type TurnChanges = z.infer<typeof TurnChanges>;

/** Where a run's turn works: the repository's name, the worktree's folder and its HEAD before the turn. */
export const Workspace = z.strictObject({ repo: RepoName, path: z.string().min(1).max(4096), head: CommitSha });
export type Workspace = z.infer<typeof Workspace>;

/** The branch a lane's work is on, in every repository and on every computer. */
export function laneBranch(lane: string): string {
  return `runledger/${lane}`;
}

/** The summary of what a turn changed, without the diff: what the completion carries to the board. */
export function summaryOf(changes: TurnChanges): ChangeSummary {
  const { base, head, filesChanged, insertions, deletions, commits, commitCount, uncommittedFiles } = changes;
  return { base, head, filesChanged, insertions, deletions, commits, commitCount, uncommittedFiles };
}

/** One line a person reads: "changed nothing", or "2 commits, 3 files changed (+10 −2), 1 left uncommitted". */
export function describeChanges(changes: ChangeSummary): string {
  if (changes.commitCount === 0 && changes.filesChanged === 0) return 'changed nothing';
  const parts: string[] = [];
  if (changes.commitCount > 0) parts.push(`${changes.commitCount} commit${changes.commitCount === 1 ? '' : 's'}`);
  if (changes.filesChanged > 0)
    parts.push(`${changes.filesChanged} file${changes.filesChanged === 1 ? '' : 's'} changed (+${changes.insertions} −${changes.deletions})`);
  else parts.push('no file differs from where it began');
  if (changes.uncommittedFiles > 0) parts.push(`${changes.uncommittedFiles} left uncommitted`);
  return parts.join(', ');
}
