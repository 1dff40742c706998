import { SAFE_ID, SAFE_ID_RULE } from '../idRule.ts';
import { MAX_REPOS, type RepoAnnouncement } from '../workspace.ts';

/**
 * How a computer tells the board which repositories it has (docs/rules.md#workspaces), defined once for
 * both sides of the wire: a header on the push stream's upgrade, `Runledger-Repos: app, lib`, the names
 * of its `--repo`s, its default first; empty for a computer started without `--repo`. An older computer
 * sends no such header: the board takes it to have any repository.
 */

/** The header, as Node reads it (lower case). */
export const REPOS_HEADER = 'runledger-repos';

/** The header's value for an announcement: its default first, then the other names. */
export function reposHeader(repos: RepoAnnouncement): string {
  const rest = repos.names.filter((name) => name !== repos.default);
  return (repos.default === null ? rest : [repos.default, ...rest]).join(', ');
}

/** The announcement a header's value makes, or the reason it makes none (a message naming what is wrong). */
export function parseReposHeader(value: string): RepoAnnouncement | { error: string } {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const bad = names.find((name) => !SAFE_ID.test(name));
  if (bad !== undefined) return { error: `the Runledger-Repos header names "${bad.slice(0, 80)}", which does not match ${SAFE_ID_RULE}` };
  if (new Set(names).size !== names.length) return { error: 'the Runledger-Repos header names a repository twice' };
  if (names.length > MAX_REPOS) return { error: `the Runledger-Repos header names more than ${MAX_REPOS} repositories` };
  return { names: [...names].sort(), default: names[0] ?? null };
}
