import type { RunStart } from '../../events/queueEvents.ts';
import type { Usage } from '../../events/usage.ts';
import type { ChangeSummary, Workspace } from '../../events/workspace.ts';

/**
 * A claimed run on its computer, from hand-over to settlement. `phase` moves forward only:
 * handed over → requested (spawn decided) → executing → completing → settled; but for `limited`: its
 * agent stopped at the login's usage limit, and it waits (claimed, heartbeated) to be requested again;
 * and `preparing`: a run in a repository waits for its lane's worktree before its spawn is requested;
 * `pushing`: its turn committed to the lane's branch, which goes to `origin` before it is completed.
 */
export type RunPhase = 'new' | 'handed' | 'preparing' | 'requested' | 'executing' | 'limited' | 'pushing' | 'completing' | 'settled';

export interface RunExecution {
  phase: RunPhase;
  lane: string | null;
  deadlineAt: number | null;
  budgetMs: number | null;
  /** What its budget had left when it stopped at a usage limit (absent in states folded by older versions: none). */
  budgetLeftMs?: number | null;
  /**
   * The start its claim carried, kept while it is held (claimed while its login was at its usage limit,
   * `run.start.held`) until its queue gives it a slot; absent for every other run.
   */
  heldStart?: RunStart;
  /** The session this attempt resumes (null: a fresh turn). */
  resuming: string | null;
  /** The session the lane remembered when the run was handed over, and any announced since. */
  session: string | null;
  announced: string | null;
  pid: number | null;
  /** Its agent's mark, while it runs (absent: not running, and in older states and logs). */
  mark?: string;
  /** A turn of `runledger run`: no board holds it, so there is nothing to heartbeat or complete. */
  local: boolean;
  cancelRequested: boolean;
  resolved: boolean;
  completionAttempts: number;
  completionNotBefore: number;
  result: { ok: boolean; error?: string } | null;
  reply: string | null;
  /** What the turn cost, posted with its completion; absent when its agent said nothing (and in older states). */
  usage?: Usage;
  /** The worktree the run works in, once prepared (absent: the lane's plain folder, and in older states). */
  workspace?: Workspace;
  /** What its turn changed in its worktree, posted with its completion (absent: none recorded). */
  changes?: ChangeSummary;
  /** Its lane's branch is pushed to `origin` after a turn that committed to it (`--push`). */
  push?: true;
  /**
   * Its queue takes its settle (or its paused completion) as its input, which then carries its result
   * for the queue to read: set for a run started from its queue's `run.claimed`, or shut down before its
   * start, by this version. Absent for runs an older version handed over, whose queue was told by an
   * input of its own (`run.execution.ended`): their settles replay as they were decided, without it.
   */
  endTold?: true;
}

export function initialRunExecution(): RunExecution {
  return {
    phase: 'new',
    lane: null,
    deadlineAt: null,
    budgetMs: null,
    resuming: null,
    session: null,
    announced: null,
    pid: null,
    local: false,
    cancelRequested: false,
    resolved: false,
    completionAttempts: 0,
    completionNotBefore: 0,
    result: null,
    reply: null,
  };
}

/** Failed completions are retried after these waits (about ten minutes in all), heartbeating meanwhile. */
export const COMPLETION_RETRY_S = [1, 3, 9, 30, 60, 120, 180, 240] as const;

/** The exact error a cancelled run is completed with: the board and its users match on it. */
export const CANCELLED_MARKER = 'cancelled_by_user';
export const SHUTDOWN_BEFORE_START = 'the daemon shut down before this run started';
export const INTERRUPTED_BY_RESTART = 'interrupted by a restart';
