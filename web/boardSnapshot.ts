import type { BoardLane, BoardState } from '../actors/board/boardState.ts';
import { settledRun } from '../actors/board/settledRun.ts';
import type { QueueState } from '../actors/lane/queueState.ts';
import type { SessionClose } from '../actors/session/sessionState.ts';
import type { DomainEvent } from '../events/catalog.ts';
import { wordSessionReason } from '../events/sessionReasons.ts';
import type { CloseState } from '../projections/close.ts';
import { computersStatus } from '../projections/statusView.ts';
import { type LastDayUsage, lastDayUsage, type UsageState } from '../projections/usage.ts';
import { type LaneView, laneRows, type RunCounts } from './laneRows.ts';

export type { LaneRow, LaneView, RunPlace } from './laneRows.ts';

export interface SessionView {
  readonly computer: string;
  readonly lane: string;
  readonly sessionId: string;
  /** The close projection's view of it; null while the log records no session close. */
  readonly close: { readonly state: string; readonly why: string | null } | null;
}

export interface ComputerView {
  readonly id: string;
  readonly connected: boolean;
  /** Null while this log holds no queue event of it (a computer with a log of its own never has one here). */
  readonly slots: number | null;
  readonly inUse: number | null;
  readonly held: boolean;
  readonly draining: boolean;
  /** Logins at their usage limit on it: until when, in their agent's words. */
  readonly limits: readonly { login: string; until: number; words: string }[];
}

/**
 * The board page: every section of `/`, as of `at`, the size of a page whatever the board holds
 * (docs/web.md#a-large-board): each list is cut to its first items, and `more` says how many were left out.
 */
export interface BoardSnapshot {
  readonly at: number;
  readonly lanes: readonly LaneView[];
  readonly claims: readonly { runId: string; lane: string; computerId: string; claimedAt: number }[];
  readonly sessions: readonly SessionView[];
  readonly computers: readonly ComputerView[];
  /** Every run waiting or worked on, shown or not. */
  readonly counts: RunCounts;
  /** What each list left out: lanes with no row shown, rows not shown, and the other lists' items past their cap. */
  readonly more: { readonly lanes: number; readonly runs: number; readonly claims: number; readonly sessions: number; readonly computers: number };
  /** Set when runs wait that no computer will take: one sentence. */
  readonly stuck: StuckNotice | null;
  /** The run that has waited longest for a computer, for the page to call out past its threshold. */
  readonly longestWait: LongestWait | null;
  /** What runs cost over the last day, per login and per lane (null when the usage projection is not given). */
  readonly usage: LastDayUsage | null;
}

/** How many open claims, sessions and computers a page lists (the lanes' rows: PAGE_ROWS). */
export const PAGE_ITEMS = { claims: 100, sessions: 100, computers: 100 } as const;

export interface StuckNotice {
  readonly kind: 'no_taker';
  readonly text: string;
}

export interface LongestWait {
  readonly runId: string;
  /** When it was submitted. */
  readonly since: number;
  /** Past this long, the page says it has waited too long. */
  readonly warnAfterMs: number;
}

export interface SnapshotOptions {
  /** A run next in its lane that has waited this long for a computer is called out. */
  readonly waitWarnMs: number;
  /**
   * When each run became the next of its lane, as this view first saw it (kept by the caller between
   * snapshots). A later turn waits for the earlier one first, and the board's state does not say when
   * that one ended: without this, a turn queued behind a 20-minute turn would read as 20 minutes
   * without a computer the moment its lane freed.
   */
  readonly becameNext?: Map<string, number>;
}

/**
 * Five minutes: longer than a lease (90 s) and a few heartbeats, so a computer that died and whose
 * claims are being reaped, or one reconnecting, is not called stuck; short enough that a board
 * nobody serves is said to be so before its user gives up on it.
 */
export const WAIT_WARN_MS = 5 * 60_000;

export interface SnapshotSources {
  readonly board: BoardState;
  readonly queues: Record<string, QueueState>;
  /** The session each lane's next turn resumes, by computer then lane. */
  readonly laneSessions: Record<string, Record<string, string>>;
  readonly usage?: UsageState;
  /** Each computer's session closes (the close projection), for the close state of each session. */
  readonly closes?: CloseState;
}

/** A session's close as the log records it (its latest close, when it had several), or null while none is recorded. */
function closeView(latest: SessionClose | undefined): SessionView['close'] {
  if (latest === undefined) return null;
  if (latest.confirmedAt !== null) return { state: 'closed', why: 'its process stopped; the next turn of its lane resumes it' };
  if (latest.failedAt !== null) return { state: 'close failed', why: latest.failure === null ? null : wordSessionReason(latest.failure) };
  if (latest.open)
    return { state: latest.deferred ? 'closing, deferred' : 'closing', why: latest.deferred === null ? null : wordSessionReason(latest.deferred) };
  return null;
}

/**
 * The board page's content: the lanes' rows (laneRows: counted in full, listed in part), the open
 * claims, the sessions (those of the lanes shown first) and the computers, each list cut to its cap.
 */
export function boardSnapshot(sources: SnapshotSources, at: number, options: SnapshotOptions = { waitWarnMs: WAIT_WARN_MS }): BoardSnapshot {
  const { board } = sources;
  const queues = computersStatus(sources.queues, at);
  const waits = new LongestWaitFinder(options.waitWarnMs, at, options.becameNext ?? new Map());
  let unclaimed = 0;
  const rows = laneRows(board, queues, (queue) => {
    unclaimed += queue.unclaimed.length;
    waits.visit(board, queue);
  });

  const ids = new Set([...Object.keys(board.computers), ...board.connected, ...Object.keys(queues)]);
  const computers = [...ids].sort().map((id): ComputerView => {
    const queue = queues[id];
    const connected = board.connected.includes(id);
    return {
      id,
      connected,
      slots: queue?.slots ?? null,
      inUse: queue?.inUse ?? null,
      held: queue?.held ?? false,
      // Draining ends with the daemon's life: a computer that drained and stopped is offline, not draining for ever.
      draining: connected && (queue?.draining ?? false),
      limits: Object.entries(queue?.limits ?? {}).map(([login, limit]) => ({ login, ...limit })),
    };
  });

  const claims: BoardSnapshot['claims'][number][] = [];
  let claimCount = 0;
  for (const runId in board.open) {
    if (claimCount++ >= PAGE_ITEMS.claims) continue;
    const run = board.runs[runId];
    claims.push({ runId, lane: run?.lane ?? '?', computerId: run?.computerId ?? '?', claimedAt: run?.claimedAt ?? 0 });
  }

  const sessions = sessionsOf(sources, new Set(rows.lanes.map((l) => l.lane)));
  return {
    at,
    lanes: rows.lanes,
    claims,
    sessions: sessions.shown,
    computers: computers.slice(0, PAGE_ITEMS.computers),
    counts: rows.counts,
    more: {
      ...rows.more,
      claims: claimCount - claims.length,
      sessions: sessions.more,
      computers: Math.max(0, computers.length - PAGE_ITEMS.computers),
    },
    stuck: stuckNotice(board, unclaimed, computers),
    longestWait: waits.done(),
    usage: sources.usage ? lastDayUsage(sources.usage, at) : null,
  };
}

/** The sessions a page lists: those of the lanes it shows first, up to the cap, each with its close state. */
function sessionsOf(sources: SnapshotSources, lanesShown: ReadonlySet<string>): { shown: SessionView[]; more: number } {
  const first: [string, string, string][] = [];
  const rest: [string, string, string][] = [];
  let count = 0;
  for (const computer in sources.laneSessions) {
    const lanes = sources.laneSessions[computer]!;
    for (const lane in lanes) {
      count++;
      const list = lanesShown.has(lane) ? first : rest;
      if (list.length < PAGE_ITEMS.sessions) list.push([computer, lane, lanes[lane]!]);
    }
  }
  const picked = [...first, ...rest].slice(0, PAGE_ITEMS.sessions);
  const closes = new Map<string, Map<string, SessionClose>>();
  const shown = picked.map(([computer, lane, sessionId]): SessionView => {
    const latest = closes.get(computer) ?? closes.set(computer, latestCloses(sources.closes?.[computer])).get(computer)!;
    return { computer, lane, sessionId, close: closeView(latest.get(sessionId)) };
  });
  return { shown, more: count - shown.length };
}

/** Each session's latest close on one computer (a session closed several times: its latest), read once per page. */
function latestCloses(closes: CloseState[string] | undefined): Map<string, SessionClose> {
  const latest = new Map<string, SessionClose>();
  for (const close of Object.values(closes ?? {})) {
    if (close.sessionId === null) continue;
    const seen = latest.get(close.sessionId);
    if (seen === undefined || (close.intendedAt ?? 0) >= (seen.intendedAt ?? 0)) latest.set(close.sessionId, close);
  }
  return latest;
}

/**
 * Whether the board is stuck, in one sentence saying what is wrong and what to do: runs wait and no
 * connected computer takes work (none connected, or each draining or held).
 */
function stuckNotice(board: BoardState, waiting: number, computers: readonly ComputerView[]): StuckNotice | null {
  if (waiting === 0) return null;
  const runs = `${waiting} run${waiting === 1 ? '' : 's'} wait${waiting === 1 ? 's' : ''}`;
  const connected = computers.filter((c) => c.connected);
  const busy = (c: ComputerView) => (board.draining[c.id] || c.draining ? 'draining' : c.held ? 'held' : null);
  if (connected.length === 0)
    return {
      kind: 'no_taker',
      text: `${runs} but no computer is connected to take ${waiting === 1 ? 'it' : 'them'}: start one (\`runledger daemon\`, or \`runledger daemon --server URL\` on another machine).`,
    };
  if (connected.every((c) => busy(c) !== null)) {
    const which = connected.map((c) => `${c.id} is ${busy(c)}`).join(', ');
    return {
      kind: 'no_taker',
      text: `${runs} but no connected computer takes work (${which}): start another computer (\`runledger daemon\`); a draining one takes work again once its daemon restarts, a held one once its hold is lifted.`,
    };
  }
  return null;
}

/**
 * The run next in its lane that has waited longest for a computer (a later turn waits for the
 * lane's open one, not for a computer), with the threshold: the page says so once it is past it,
 * counting on its own clock, since nothing is written to the log while a run just waits. Shown each
 * lane with runs unclaimed (only those have a next run), then asked for the longest.
 */
class LongestWaitFinder {
  private oldest: LongestWait | null = null;
  private readonly nexts = new Set<string>();

  constructor(
    private readonly waitWarnMs: number,
    private readonly at: number,
    private readonly becameNext: Map<string, number>,
  ) {}

  visit(board: BoardState, l: BoardLane): void {
    const next = l.holder === null ? l.unclaimed.find((id) => !l.waiters.includes(id)) : undefined;
    const submittedAt = next === undefined ? undefined : board.runs[next]?.submittedAt;
    if (next === undefined || submittedAt === undefined) return;
    // The lane's first turn has waited since it was submitted; a later one since its lane freed, which
    // is no later than when this view first saw it next (a view started since under-counts, never over).
    let since = submittedAt;
    if (l.lastComputer !== null) {
      this.nexts.add(next);
      since = this.becameNext.get(next) ?? this.becameNext.set(next, Math.max(submittedAt, this.at)).get(next)!;
    }
    if (this.oldest === null || since < this.oldest.since) this.oldest = { runId: next, since, warnAfterMs: this.waitWarnMs };
  }

  done(): LongestWait | null {
    for (const runId of this.becameNext.keys()) if (!this.nexts.has(runId)) this.becameNext.delete(runId);
    return this.oldest;
  }
}

/** What the run page shows above its timeline: the board's view of the run, or null when the board has none. */
export interface RunFacts {
  readonly runId: string;
  readonly lane: string;
  readonly state: string;
  readonly computerId: string | null;
  readonly submittedAt: number;
  readonly claimedAt: number | null;
  readonly error: string | null;
}

/** `events`: the run's own events, for a run that settled and left the board's state (see `settledRun`). */
export function runFacts(board: BoardState, runId: string, events: readonly DomainEvent[] = []): RunFacts | null {
  const run = board.runs[runId] ?? settledRun(events);
  if (!run) return null;
  const error = 'error' in run ? run.error : null;
  return {
    runId,
    lane: run.lane,
    state: run.state,
    computerId: run.computerId,
    submittedAt: run.submittedAt,
    claimedAt: run.claimedAt,
    error: error === null ? null : error.slice(0, 300),
  };
}
