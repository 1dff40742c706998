import type { Activity } from '../../events/sessionEvents.ts';

/** What the log knows of a session when a round reads it. */
export interface SessionAtRead {
  /** The agent's id for it, or the key of a launch never bound to one. */
  readonly sessionId: string;
  readonly bound: boolean;
  /** The process group its last run left behind (its end never seen), or null. */
  readonly pid: number | null;
}

export interface StopOutcome {
  /** True when nothing of it runs any more (stopped now, or gone already). */
  readonly ok: boolean;
  readonly detail: string;
}

/**
 * How a computer's sessions are found, read and stopped: the one edge the close decisions reach the
 * world through. `read` throws when the session could not be read just now (the close then waits);
 * `stop` stops what a reading named as its `target`, keeping the session's id (a later turn resumes
 * it), and never throws.
 */
export interface SessionDriver {
  readonly name: 'exec' | 'tmux';
  read(session: SessionAtRead): Promise<Activity>;
  stop(target: string): Promise<StopOutcome>;
}
