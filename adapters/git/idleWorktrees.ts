import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { messageOf } from '../../events/thrown.ts';
import { closeWorktree } from './closeWorktree.ts';
import { onRepository } from './git.ts';
import type { Repositories } from './repositories.ts';

export interface IdleWorktrees {
  readonly workspaceRoot: string;
  readonly repos: Repositories;
  /** A lane's worktree whose lane has had nothing happen for this long is closed (`--worktree-idle-days`). */
  readonly idleMs: number;
  readonly now: () => number;
  /** When the lane last had something happen on this computer (its queue's last event), or null. */
  readonly lastActivity: (lane: string) => Promise<number | null>;
  /** Whether a run of the lane is held here now (claimed, not settled): its worktree is in use. */
  readonly busy: (lane: string) => boolean;
  readonly log: (line: string) => void;
}

/**
 * `--worktree-idle-days N`: the worktrees of lanes idle for N days are closed as `runledger lane close`
 * closes them (uncommitted changes committed to the branch, the worktree removed, the branch kept), on
 * the repository's git queue, so a turn of the lane that comes meanwhile makes its worktree again after.
 */
export async function closeIdleWorktrees(o: IdleWorktrees): Promise<void> {
  for (const repo of o.repos.byName.values()) {
    const folder = join(o.workspaceRoot, `${repo.name}.worktrees`);
    if (!existsSync(folder)) continue;
    for (const lane of readdirSync(folder)) {
      if (lane.includes('.') || o.busy(lane)) continue;
      const last = await o.lastActivity(lane);
      if (last === null || o.now() - last < o.idleMs) continue;
      const path = join(folder, lane);
      await onRepository(repo.gitDir, async () => {
        // Asked again on the queue: a turn of the lane may have been claimed while this waited its turn.
        if (o.busy(lane) || !existsSync(path)) return;
        try {
          const closed = await closeWorktree(path, lane);
          const kept = closed.committed ? `its uncommitted changes committed (${closed.committed.slice(0, 12)}), ` : '';
          o.log(
            `lane ${lane}: idle since ${new Date(last).toISOString()}, its worktree ${path} was closed: ${kept}branch ${closed.branch ?? '(detached)'} kept`,
          );
        } catch (error) {
          o.log(`lane ${lane}: its idle worktree ${path} could not be closed: ${messageOf(error)}`);
        }
      });
    }
  }
}
