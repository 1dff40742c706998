import type { ReadyEntry } from './readyHeap.ts';

/** Where a run stands on this computer. A run leaves `runs` once it is handled (see HandledLookup). */
export type RunStatus = 'waiting' | 'claiming' | 'running';

export interface QueuedRun {
  readonly runId: string;
  readonly lane: string;
  readonly agentId: string | null;
  /** Arrival order on this computer: a requeued run keeps it, and with it its old place. */
  readonly arrival: number;
  status: RunStatus;
  claimAttempts: number;
  busyWaits: number;
  /** Not claimed before this time (ms); 0 = at once. */
  notBefore: number;
  /** The board resent its frame while its claim was in flight: a busy answer to that claim is stale. */
  resentWhileClaiming: boolean;
  /**
   * The life its first claim spoke for (null: that claim named none, as older versions did); absent
   * until its first claim starts. Every later claim speaks for it: that life may hold the run.
   */
  claimLife?: string | null;
  /**
   * Claimed, and waiting out its login's usage limit (`run.limit.waiting`): the board holds it as this
   * computer's, so it runs again without a claim (`run.limit.resumed`). Absent for every other run.
   */
  claimHeld?: true;
}

/** A login's usage limit, as its agent reported it. */
export interface LoginLimit {
  /** It starts nothing before this time (ms). */
  until: number;
  /** Consecutive limits of the login: a run of it that ends well resets them. */
  strikes: number;
  /** The agent's words. */
  words: string;
}

export interface LaneQueue {
  /** Runs not yet claimed, oldest first (parked ones included: they keep their place). */
  waiting: string[];
  /** The run of this lane being claimed or run, if any: a lane runs one turn at a time. */
  active: string | null;
}

/** How a run left this computer's queue for good (a frame of it is then not queued again, see HandledLookup). */
export type HandledOutcome = 'skipped' | 'withdrawn' | 'ended';

/** The queue projection of one computer (docs/rules.md#projections), and the state its queue decider reads. */
export interface QueueState {
  slots: number;
  loginCapacity: Record<string, number>;
  /** Set by the user (`scheduler.held`): it outlives the daemon's lives. */
  held: boolean;
  /** This life is shutting down; the next `computer.started` ends it. */
  draining: boolean;
  /** The life this computer is in (null before any `computer.started`, in logs of older versions). */
  incarnation: string | null;
  arrivals: number;
  runs: Record<string, QueuedRun>;
  lanes: Record<string, LaneQueue>;
  ready: ReadyEntry[];
  /** Slots in use: runs claiming or running. */
  inUse: number;
  loginsInUse: Record<string, number>;
  /** Logins whose agent said their usage limit was reached (absent in states folded by older versions: none). */
  loginLimits?: Record<string, LoginLimit>;
}

export function initialQueueState(): QueueState {
  return {
    slots: 1,
    loginCapacity: {},
    held: false,
    draining: false,
    incarnation: null,
    arrivals: 0,
    runs: {},
    lanes: {},
    ready: [],
    inUse: 0,
    loginsInUse: {},
    // No `loginLimits` until a login meets its limit: a state folded by an older version has none either,
    // so `rebuild` finds its stored checkpoints equal to a fold from seq 0.
  };
}

/** The login's limit while it holds at `at`, or null. */
export function limitOf(state: QueueState, login: string, at: number): LoginLimit | null {
  const limit = state.loginLimits?.[login];
  return limit && limit.until > at ? limit : null;
}

/** With no reset time said: 15 min, doubling with each consecutive limit of the login, at most 2 h (docs/rules.md#computer-behaviour). */
export function limitWaitMs(strikes: number): number {
  return Math.min(15 * 60_000 * 2 ** Math.max(0, strikes - 1), 2 * 3_600_000);
}

export const DEFAULT_LOGIN = 'default';

export function loginOf(run: Pick<QueuedRun, 'agentId'>): string {
  return run.agentId ?? DEFAULT_LOGIN;
}

/** A parked run neither starts nor holds its lane until its `notBefore`. */
export function isParked(run: QueuedRun, at: number): boolean {
  return run.busyWaits > 0 && run.notBefore > at;
}

/**
 * The lane's candidate at `at`: its oldest waiting run that is not parked and whose claim retry is
 * due, when no run of the lane is claiming or running. Later runs wait their turn.
 */
export function candidateOf(state: QueueState, lane: string, at: number): QueuedRun | null {
  const queue = state.lanes[lane];
  if (!queue || queue.active !== null) return null;
  for (const runId of queue.waiting) {
    const run = state.runs[runId]!;
    if (isParked(run, at)) continue;
    // Oldest first: a run waiting out a claim retry keeps its lane's turn.
    return run.notBefore <= at ? run : null;
  }
  return null;
}
