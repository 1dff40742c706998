import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';
import type { RepoAnnouncement } from '../../events/workspace.ts';
import { runGit } from './git.ts';

/**
 * The team's repositories a computer's lanes work in (`daemon --repo [NAME=]PATH`, repeatable): each
 * checked once at start, so a daemon given a path that is no repository refuses to start, naming it.
 */
export interface Repository {
  readonly name: string;
  /** The top of its main checkout, absolute. */
  readonly path: string;
  /** Its common git folder, absolute: what git commands on it are serialised by (see `onRepository`). */
  readonly gitDir: string;
}

export interface Repositories {
  readonly byName: ReadonlyMap<string, Repository>;
  /** The one a run that names none works in: the one named `default`, else the first given; null with none. */
  readonly defaultName: string | null;
}

export const NO_REPOSITORIES: Repositories = { byName: new Map(), defaultName: null };

/** What the computer tells the board it has (docs/rules.md#workspaces): the names, sorted, and its default. */
export function announcementOf(repos: Repositories): RepoAnnouncement {
  return { names: [...repos.byName.keys()].sort(), default: repos.defaultName };
}

/** `--repo [NAME=]PATH` as typed: NAME defaults to the folder's name. Throws a message naming what is wrong. */
export function parseRepoOption(text: string): { name: string; path: string } {
  const eq = text.indexOf('=');
  const named = eq > 0 && isSafeId(text.slice(0, eq));
  const path = named ? text.slice(eq + 1) : text;
  if (path === '') throw new Error(`--repo wants [NAME=]PATH, not "${text}"`);
  const name = named ? text.slice(0, eq) : basename(resolve(path));
  if (!isSafeId(name))
    throw new Error(`--repo ${text}: the repository's name "${name}" does not match ${SAFE_ID_RULE}; name it: --repo NAME=${path}`);
  return { name, path: resolve(path) };
}

/** Checks each repository (a git work tree with a commit); the first problem throws, naming it and what to do. */
export async function checkRepositories(given: readonly { name: string; path: string }[]): Promise<Repositories> {
  const byName = new Map<string, Repository>();
  for (const { name, path } of given) {
    if (byName.has(name)) throw new Error(`--repo: two repositories are named "${name}"; name one otherwise: --repo OTHER=${path}`);
    byName.set(name, await checkRepository(name, path));
  }
  const names = [...byName.keys()];
  return { byName, defaultName: byName.has('default') ? 'default' : (names[0] ?? null) };
}

export async function checkRepository(name: string, path: string): Promise<Repository> {
  if (!existsSync(path)) throw new Error(`--repo ${name}=${path}: no such folder; give the path of a git repository's checkout`);
  const answer = await runGit(path, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir']);
  const [top, gitDir] = answer.stdout.trim().split('\n');
  if (answer.code !== 0 || !top || !gitDir)
    throw new Error(
      `--repo ${name}=${path} is not a git repository's checkout (git says: ${answer.stderr.split('\n').at(-1) || 'nothing'}); give the folder of a clone`,
    );
  const head = await runGit(top, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  if (head.code !== 0) throw new Error(`--repo ${name}=${path}: the repository has no commit yet; make a first commit, then start the daemon`);
  return { name, path: top, gitDir };
}

/** What a repository's main checkout means for new lanes: where HEAD is, and what is worth a warning (detached, uncommitted changes). */
export interface CheckoutState {
  /** `on main at 1a2b3c4d5e6f`, or `detached at 1a2b3c4d5e6f`. */
  readonly at: string;
  readonly warnings: readonly string[];
  /** What to do about them, one per warning. */
  readonly fixes: readonly string[];
}

/**
 * Reads the main checkout at `top` (docs/agents.md#workspaces-in-a-repository): lanes start from its
 * HEAD's commit, so a detached HEAD or uncommitted changes there are worth saying (`doctor --repo`, and
 * the daemon as it starts), never a reason to refuse.
 */
export async function readCheckout(top: string): Promise<CheckoutState> {
  const head = (await runGit(top, ['rev-parse', 'HEAD'])).stdout.trim();
  const branch = await runGit(top, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  const warnings: string[] = [];
  const fixes: string[] = [];
  if (branch.code !== 0) {
    warnings.push(`its HEAD is detached at ${head.slice(0, 12)}: a new lane's branch starts from that commit, whatever the team's branch holds now`);
    fixes.push('check out the branch lanes should start from (git switch main), or submit runs with --base REF');
  }
  const status = await runGit(top, ['status', '--porcelain', '--untracked-files=normal']);
  const dirty = status.stdout.split('\n').filter(Boolean).length;
  if (dirty > 0) {
    warnings.push(
      `the main checkout has ${dirty} uncommitted change${dirty === 1 ? '' : 's'}: lanes start from HEAD's commit and do not see them (nor touch them)`,
    );
    fixes.push('commit what the lanes should see');
  }
  const at = branch.code === 0 ? `on ${branch.stdout.trim()} at ${head.slice(0, 12)}` : `detached at ${head.slice(0, 12)}`;
  return { at, warnings, fixes };
}
