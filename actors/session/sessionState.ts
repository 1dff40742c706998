import type { UnreadWatch } from '../../events/sessionEvents.ts';
import type { RecordedSessionReason } from '../../events/sessionReasons.ts';

/** A claim on a close: whose (`host:pid`) and until when. */
export interface CloseClaim {
  readonly lock: string;
  readonly expires: number;
}

/**
 * One session's close, as its own stream tells it. `open` from the intent until it is confirmed or
 * fails for good; a later run's end opens it again (the session was resumed meanwhile).
 */
export interface SessionClose {
  /** The agent's id for the session (or the key of a launch never bound to one). */
  sessionId: string | null;
  open: boolean;
  /** The run whose end asked for the close, and what its end told about the session. */
  runId: string | null;
  lane: string | null;
  bound: boolean;
  launchedAt: number | null;
  pid: number | null;
  intendedAt: number | null;
  claim: CloseClaim | null;
  /** Readings decided so far in this close: each one an attempt. */
  attempts: number;
  /** Why the last attempt waited, while the close waits (worded by wordSessionReason). */
  deferred: RecordedSessionReason | null;
  unread: UnreadWatch | null;
  /** A kill decided and not yet answered. */
  killing: { attempt: number; target: string; at: number } | null;
  confirmedAt: number | null;
  failedAt: number | null;
  failure: RecordedSessionReason | null;
}

export function initialSessionClose(): SessionClose {
  return {
    sessionId: null,
    open: false,
    runId: null,
    lane: null,
    bound: true,
    launchedAt: null,
    pid: null,
    intendedAt: null,
    claim: null,
    attempts: 0,
    deferred: null,
    unread: null,
    killing: null,
    confirmedAt: null,
    failedAt: null,
    failure: null,
  };
}
