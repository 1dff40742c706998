import type { RepoAnnouncement } from '../../events/workspace.ts';
import { type BoardState, takesWork } from './boardState.ts';

/**
 * Which computers a run that names a repository may go to (docs/rules.md#workspaces): those that
 * announced it when they connected. A computer that announced nothing (an older one, or one of an older
 * log) is taken to have any: it is offered the run as before and fails it, naming the repository, when
 * it has not. A run that names none goes anywhere. Pure: reads the state only.
 */

/** Whether an announcement (undefined: none made) admits a run needing `repo` (undefined: none). */
export function announces(repos: RepoAnnouncement | undefined, repo: string | undefined): boolean {
  return repo === undefined || repos === undefined || repos.names.includes(repo);
}

/** Whether `computer` may be offered a run needing `repo`. */
export function hasRepo(state: BoardState, computer: string, repo: string | undefined): boolean {
  return repo === undefined || announces(state.computers[computer]?.repos, repo);
}

/** The repository a lane's next turn works in: that of its oldest unclaimed run (undefined: none named, or none waits). */
export function laneRepo(state: BoardState, lane: string): string | undefined {
  const next = state.lanes[lane]?.unclaimed[0];
  return next === undefined ? undefined : state.runs[next]?.repo;
}

/** Whether `computer` takes work and has the repository of `lane`'s next turn: the lane may stay with it. */
export function servesLane(state: BoardState, computer: string, lane: string): boolean {
  return takesWork(state, computer) && hasRepo(state, computer, laneRepo(state, lane));
}

/**
 * Whether a submission naming `repo` is refused: the board has heard computers say which repositories
 * they have, and none (by its latest word) has this one. A board none of whose computers announced
 * any (none connected yet, or only older ones) takes it: it cannot tell a name it has not heard yet
 * from a wrong one, and the run waits for a computer that has it. So does a board with a computer that
 * last connected without announcing (an older one): it may have it, and is offered such runs.
 */
export function unknownRepo(state: BoardState, repo: string | undefined): boolean {
  return repo !== undefined && state.announcers > 0 && state.silent === 0 && !state.repoHolders[repo];
}

/** The repositories the board's computers have, as each last announced them, sorted. */
export function knownRepos(state: BoardState): string[] {
  return Object.keys(state.repoHolders).sort();
}

/** Folds `computer`'s latest connect and its announcement (undefined: it made none) into the board's index of repositories, in place. */
export function recordAnnouncement(state: BoardState, computer: string, repos: RepoAnnouncement | undefined): void {
  const known = state.computers[computer]!;
  const was = known.repos;
  if (known.silent) state.silent--;
  if (was !== undefined) {
    state.announcers--;
    for (const name of was.names) {
      const left = (state.repoHolders[name] ?? 0) - 1;
      if (left > 0) state.repoHolders[name] = left;
      else delete state.repoHolders[name];
    }
  }
  if (repos === undefined) {
    delete known.repos;
    known.silent = true;
    state.silent++;
    return;
  }
  delete known.silent;
  known.repos = repos;
  state.announcers++;
  for (const name of repos.names) state.repoHolders[name] = (state.repoHolders[name] ?? 0) + 1;
}
