import { type BoardState, isTerminal } from '../actors/board/boardState.ts';
import { settledRun } from '../actors/board/settledRun.ts';
import { WAITS_FOR_EARLIER_TURN } from '../actors/lane/decideQueue.ts';
import type { QueueState } from '../actors/lane/queueState.ts';
import type { SessionClose } from '../actors/session/sessionState.ts';
import type { DomainEvent } from '../events/catalog.ts';
import type { CloseState } from '../projections/close.ts';
import { type StatusView, statusView } from '../projections/statusView.ts';
import type { LastDayUsage, UsageState } from '../projections/usage.ts';

/** Where one run stands, as a row of its lane: on a computer (its queue's view) or on the board. */
export interface RunPlace {
  readonly runId: string;
  readonly state: 'running' | 'claiming' | 'claimed' | 'parked' | 'retrying' | 'queued';
  /** The computer whose queue holds it; null when only the board knows of it. */
  readonly computer: string | null;
  /** Parked or retrying: when it is claimed again (ms). */
  readonly until: number | null;
  readonly why: string;
}

/**
 * One run of a lane, once: a run pushed to several computers waits in each of their queues, and
 * those copies are folded here into the row of the run, which says where it has gone furthest.
 */
export interface LaneRow {
  readonly runId: string;
  /** The furthest any copy has gone (a run parked on one computer and queued on another is parked). */
  readonly state: RunPlace['state'];
  /** The board's state of it (docs/rules.md#wire-and-cli), or null when the board in this log has no such run. */
  readonly board: string | null;
  /** Each computer's copy, furthest first; a run only the board knows of has one with `computer` null. */
  readonly copies: readonly RunPlace[];
  /** The furthest copy's reason and, parked or retrying, when it is claimed again. */
  readonly why: string;
  readonly until: number | null;
}

export interface LaneView {
  readonly lane: string;
  readonly runs: readonly LaneRow[];
  /** Rows left out past the cap: a lane of 100,000 runs is summed up, not drawn. */
  readonly more: number;
}

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

/** The board page: every section of `/`, as of `at`. */
export interface BoardSnapshot {
  readonly at: number;
  readonly lanes: readonly LaneView[];
  readonly claims: readonly { runId: string; lane: string; computerId: string; claimedAt: number }[];
  readonly sessions: readonly SessionView[];
  readonly computers: readonly ComputerView[];
  readonly counts: { readonly queued: number; readonly parked: number; readonly claiming: number; readonly running: number };
  /** Set when runs wait that no computer will take: one sentence. */
  readonly stuck: StuckNotice | null;
  /** The run that has waited longest for a computer, for the page to call out past its threshold. */
  readonly longestWait: LongestWait | null;
  /** What runs cost over the last day, per login and per lane (when the usage projection is given). */
  readonly usage?: LastDayUsage;
}

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

const ROWS_PER_LANE = 50;

/** A session's close as the log records it (its latest close, when it had several), or null while none is recorded. */
function closeOf(closes: CloseState[string] | undefined, sessionId: string): SessionView['close'] {
  let latest: SessionClose | null = null;
  for (const close of Object.values(closes ?? {})) {
    if (close.sessionId !== sessionId) continue;
    if (latest === null || (close.intendedAt ?? 0) >= (latest.intendedAt ?? 0)) latest = close;
  }
  if (latest === null) return null;
  if (latest.confirmedAt !== null) return { state: 'closed', why: 'its process stopped; the next turn of its lane resumes it' };
  if (latest.failedAt !== null) return { state: 'close failed', why: latest.failure };
  if (latest.open) return { state: latest.deferred ? 'closing, deferred' : 'closing', why: latest.deferred };
  return null;
}

/**
 * The board page's content, from the same status view `runledger status` prints, lane by lane: the
 * computers' queues say what is running, claiming, parked (until when) or queued where; the board
 * adds what no computer in this log holds (a claim by a remote computer, a run not pushed yet).
 */
export function boardSnapshot(sources: SnapshotSources, at: number, options: SnapshotOptions = { waitWarnMs: WAIT_WARN_MS }): BoardSnapshot {
  const { board } = sources;
  const status = statusView(board, sources.queues, at, sources.usage);
  const rows = new Map<string, RunPlace[]>();
  const add = (lane: string, place: RunPlace) => (rows.get(lane) ?? rows.set(lane, []).get(lane)!).push(place);
  const held = new Set<string>();

  for (const [computer, view] of Object.entries(status.computers)) {
    for (const [lane, l] of Object.entries(view.lanes)) {
      if (l.active && isStale(board, l.active.runId, computer)) held.add(l.active.runId);
      else if (l.active) {
        held.add(l.active.runId);
        const running = l.active.status === 'running';
        add(lane, {
          runId: l.active.runId,
          state: running ? 'running' : 'claiming',
          computer,
          until: null,
          why: running ? `its turn: running on ${computer}` : `${computer} is asking the board for its claim`,
        });
      }
      l.waiting.forEach((w, place) => {
        held.add(w.runId);
        if (isStale(board, w.runId, computer)) return;
        const why = (text: string) => text + elsewhere(board, w.runId, computer);
        if (w.limitedUntil !== undefined)
          add(lane, {
            runId: w.runId,
            state: 'parked',
            computer,
            until: w.limitedUntil,
            why: "its login's usage limit was reached: it runs again then",
          });
        else if (w.parkedUntil !== null)
          add(lane, { runId: w.runId, state: 'parked', computer, until: w.parkedUntil, why: why(WAITS_FOR_EARLIER_TURN) });
        else if (w.retryAt !== null)
          add(lane, { runId: w.runId, state: 'retrying', computer, until: w.retryAt, why: why('its claim failed: it is tried again') });
        else
          add(lane, {
            runId: w.runId,
            state: 'queued',
            computer,
            until: null,
            why: why(place === 0 && !l.active ? 'next in its lane, waiting for a free slot' : 'waits its turn in the lane'),
          });
      });
    }
  }

  for (const [lane, l] of Object.entries(status.board.lanes)) {
    if (l.open !== null && !held.has(l.open)) {
      add(lane, {
        runId: l.open,
        state: 'claimed',
        computer: board.runs[l.open]?.computerId ?? null,
        until: null,
        why: 'the open turn of its conversation',
      });
    }
    const told = new Set(l.waiting);
    for (const runId of l.queued) {
      if (held.has(runId)) continue;
      add(lane, {
        runId,
        state: told.has(runId) ? 'parked' : 'queued',
        computer: null,
        until: null,
        why: told.has(runId)
          ? `${WAITS_FOR_EARLIER_TURN} (the board answered conversation_busy)`
          : 'queued on the board: not yet taken by a computer',
      });
    }
  }

  const all: LaneRow[] = [];
  const lanes = [...rows.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([lane, places]): LaneView => {
      const folded = foldCopies(board, places);
      all.push(...folded);
      return { lane, runs: folded.slice(0, ROWS_PER_LANE), more: Math.max(0, folded.length - ROWS_PER_LANE) };
    });

  const counts = { queued: 0, parked: 0, claiming: 0, running: 0 };
  for (const run of all) {
    // A wait left in a computer's queue for a run the board already finished is shown, not counted.
    if (isTerminal(board.runs[run.runId]?.state ?? 'queued')) continue;
    if (run.state === 'running' || run.state === 'claimed') counts.running++;
    else if (run.state === 'claiming') counts.claiming++;
    else if (run.state === 'parked') counts.parked++;
    else counts.queued++;
  }

  const sessions: SessionView[] = [];
  for (const [computer, lanes] of Object.entries(sources.laneSessions)) {
    for (const [lane, sessionId] of Object.entries(lanes))
      sessions.push({ computer, lane, sessionId, close: closeOf(sources.closes?.[computer], sessionId) });
  }

  const ids = new Set([...Object.keys(board.computers), ...status.board.connected, ...Object.keys(status.computers)]);
  const computers = [...ids].sort().map((id): ComputerView => {
    const queue = status.computers[id];
    const connected = status.board.connected.includes(id);
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

  const claims = status.board.openClaims.map((c) => ({ ...c, lane: board.runs[c.runId]?.lane ?? '?' }));
  return {
    at,
    lanes,
    claims,
    sessions,
    computers,
    counts,
    stuck: stuckNotice(board, status, computers),
    longestWait: longestWait(board, status, options.waitWarnMs, at, options.becameNext ?? new Map()),
    ...(status.usage ? { usage: status.usage } : {}),
  };
}

/**
 * A computer's copy of a run that the board already settled, or gave to another computer: that
 * computer's queue keeps it until its own claim is answered or its timer runs out, but the run waits
 * for nothing there, and a page that showed it (as "parked" on the losing computer, or counted it
 * among the waiting) would say what is not so. A run the board no longer holds has settled (in one
 * log, every run a computer queued was the board's first). The run's own row and page say where it is.
 */
function isStale(board: BoardState, runId: string, computer: string): boolean {
  const run = board.runs[runId];
  if (!run || isTerminal(run.state)) return true;
  return run.state !== 'queued' && run.computerId !== null && run.computerId !== computer;
}

const RANK: Record<RunPlace['state'], number> = { running: 0, claimed: 0, claiming: 1, parked: 2, retrying: 3, queued: 4 };

/** A lane's places as one row per run: active turns first, waiting runs in their queue order. */
function foldCopies(board: BoardState, places: readonly RunPlace[]): LaneRow[] {
  const byRun = new Map<string, RunPlace[]>();
  for (const place of places) (byRun.get(place.runId) ?? byRun.set(place.runId, []).get(place.runId)!).push(place);
  const rows = [...byRun.entries()].map(([runId, copies], order) => {
    const sorted = [...copies].sort((a, b) => RANK[a.state] - RANK[b.state]);
    const furthest = sorted[0]!;
    const row: LaneRow = {
      runId,
      state: furthest.state,
      board: board.runs[runId]?.state ?? null,
      copies: sorted,
      why: furthest.why,
      until: furthest.until,
    };
    return { row, order };
  });
  const active = (s: RunPlace['state']) => (s === 'running' || s === 'claiming' || s === 'claimed' ? 0 : 1);
  return rows.sort((x, y) => active(x.row.state) - active(y.row.state) || x.order - y.order).map(({ row }) => row);
}

/**
 * Whether the board is stuck, in one sentence saying what is wrong and what to do: runs wait and no
 * connected computer takes work (none connected, or each draining or held).
 */
function stuckNotice(board: BoardState, status: StatusView, computers: readonly ComputerView[]): StuckNotice | null {
  const waiting = Object.values(status.board.lanes).flatMap((l) => l.queued);
  if (waiting.length === 0) return null;
  const runs = `${waiting.length} run${waiting.length === 1 ? '' : 's'} wait${waiting.length === 1 ? 's' : ''}`;
  const connected = computers.filter((c) => c.connected);
  const busy = (c: ComputerView) => (board.draining[c.id] || c.draining ? 'draining' : c.held ? 'held' : null);
  if (connected.length === 0)
    return {
      kind: 'no_taker',
      text: `${runs} but no computer is connected to take ${waiting.length === 1 ? 'it' : 'them'}: start one (\`runledger daemon\`, or \`runledger daemon --server URL\` on another machine).`,
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
 * counting on its own clock, since nothing is written to the log while a run just waits.
 */
function longestWait(board: BoardState, status: StatusView, waitWarnMs: number, at: number, becameNext: Map<string, number>): LongestWait | null {
  let oldest: LongestWait | null = null;
  const nexts = new Set<string>();
  for (const [lane, l] of Object.entries(status.board.lanes)) {
    const next = l.open === null ? l.queued.find((id) => !l.waiting.includes(id)) : undefined;
    const submittedAt = next === undefined ? undefined : board.runs[next]?.submittedAt;
    if (next === undefined || submittedAt === undefined) continue;
    nexts.add(next);
    // The lane's first turn has waited since it was submitted; a later one since its lane freed, which
    // is no later than when this view first saw it next (a view started since under-counts, never over).
    const firstTurn = (board.lanes[lane]?.lastComputer ?? null) === null;
    const since = firstTurn ? submittedAt : (becameNext.get(next) ?? becameNext.set(next, Math.max(submittedAt, at)).get(next)!);
    if (oldest === null || since < oldest.since) oldest = { runId: next, since, warnAfterMs: waitWarnMs };
  }
  for (const runId of becameNext.keys()) if (!nexts.has(runId)) becameNext.delete(runId);
  return oldest;
}

/**
 * A run pushed to several computers waits in each queue until its claim is answered: when the board
 * already gave it to another one (or it ended), the row says so, so a stale wait is not mistaken for
 * the run's state.
 */
function elsewhere(board: BoardState, runId: string, computer: string): string {
  const run = board.runs[runId];
  if (!run || run.state === 'queued') return '';
  return ` (on the board: ${run.state}${run.computerId && run.computerId !== computer ? ` on ${run.computerId}` : ''})`;
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
