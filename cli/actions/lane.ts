import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type ClosedWorktree, closeWorktree } from '../../adapters/git/closeWorktree.ts';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';
import { type ExecutionsState, executionsProjection } from '../../projections/executions.ts';
import { hydrateStates } from '../../runtime/folds/hydrate.ts';
import type { LaneCloseOptions } from '../commands/lane.ts';
import { logLocation, openLogToRead } from '../shared/openLog.ts';
import { print } from '../shared/options.ts';

/**
 * `runledger lane close LANE`: the lane's worktrees in the home of `--db` (every computer's, every
 * repository's) are removed and their branches kept, uncommitted changes committed first. It reads the
 * log first and refuses while a run of the lane is held by a computer of that log (a turn under way, or
 * one about to start), so no agent's folder goes from under it.
 */
export async function closeLane(lane: string, options: LaneCloseOptions): Promise<void> {
  if (!isSafeId(lane)) throw new Error(`lane ${JSON.stringify(lane)} must match ${SAFE_ID_RULE}`);
  const store = await openLogToRead(options);
  let executions: ExecutionsState;
  try {
    [executions] = await hydrateStates(store, [executionsProjection]);
  } finally {
    await store.close();
  }
  for (const [computer, runs] of Object.entries(executions)) {
    const live = Object.entries(runs).find(([, run]) => run.lane === lane);
    if (live)
      throw new Error(
        `lane ${lane} has a run under way on computer ${computer} (run ${live[0]}, ${live[1].phase}): close the lane once it has ended (runledger cancel ${live[0].slice(0, 8)} to end it now)`,
      );
  }
  const root = join(dirname(logLocation(options.db)), 'workspaces');
  const closed: ClosedWorktree[] = [];
  for (const computer of existsSync(root) ? readdirSync(root) : []) {
    for (const repos of readdirSync(join(root, computer)).filter((name) => name.endsWith('.worktrees'))) {
      const path = join(root, computer, repos, lane);
      if (existsSync(path)) closed.push(await closeWorktree(path, lane));
    }
  }
  if (closed.length === 0) throw new Error(`lane ${lane} has no worktree under ${root}: nothing to close`);
  print(options, { lane, closed }, () =>
    closed
      .map(
        (c) =>
          `closed ${c.path}: ${c.committed ? `its uncommitted changes were committed (${c.committed.slice(0, 12)})` : 'nothing was uncommitted'}; its branch ${c.branch ?? '(detached)'} is kept`,
      )
      .join('\n'),
  );
}
