import { type BoardState, isTerminal } from '../actors/board/boardState.ts';
import { WAITS_FOR_EARLIER_TURN } from '../actors/lane/decideQueue.ts';
import type { QueueState } from '../actors/lane/queueState.ts';
import { statusView } from '../projections/statusView.ts';

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

export interface LaneView {
  readonly lane: string;
  readonly runs: readonly RunPlace[];
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
}

/** The board page: every section of `/`, as of `at`. */
export interface BoardSnapshot {
  readonly at: number;
  readonly lanes: readonly LaneView[];
  readonly claims: readonly { runId: string; lane: string; computerId: string; claimedAt: number }[];
  readonly sessions: readonly SessionView[];
  readonly computers: readonly ComputerView[];
  readonly counts: { readonly queued: number; readonly parked: number; readonly claiming: number; readonly running: number };
}

export interface SnapshotSources {
  readonly board: BoardState;
  readonly queues: Record<string, QueueState>;
  /** The session each lane's next turn resumes, by computer then lane. */
  readonly laneSessions: Record<string, Record<string, string>>;
}

const ROWS_PER_LANE = 50;

/**
 * The board page's content, from the same status view `runledger status` prints, lane by lane: the
 * computers' queues say what is running, claiming, parked (until when) or queued where; the board
 * adds what no computer in this log holds (a claim by a remote computer, a run not pushed yet).
 */
export function boardSnapshot(sources: SnapshotSources, at: number): BoardSnapshot {
  const { board } = sources;
  const status = statusView(board, sources.queues, at);
  const rows = new Map<string, RunPlace[]>();
  const add = (lane: string, place: RunPlace) => (rows.get(lane) ?? rows.set(lane, []).get(lane)!).push(place);
  const held = new Set<string>();

  for (const [computer, view] of Object.entries(status.computers)) {
    for (const [lane, l] of Object.entries(view.lanes)) {
      if (l.active) {
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
        const why = (text: string) => text + elsewhere(board, w.runId, computer);
        if (w.parkedUntil !== null) add(lane, { runId: w.runId, state: 'parked', computer, until: w.parkedUntil, why: why(WAITS_FOR_EARLIER_TURN) });
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

  const order: Record<RunPlace['state'], number> = { running: 0, claiming: 1, claimed: 2, parked: 3, retrying: 3, queued: 3 };
  const lanes = [...rows.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([lane, runs]): LaneView => {
      // Active turns first; waiting runs keep their queue order (a stable sort).
      const sorted = runs
        .map((r, i) => ({ r, i }))
        .sort((x, y) => order[x.r.state] - order[y.r.state] || x.i - y.i)
        .map(({ r }) => r);
      return { lane, runs: sorted.slice(0, ROWS_PER_LANE), more: Math.max(0, sorted.length - ROWS_PER_LANE) };
    });

  // A run pushed to two computers waits in both queues: counted once, where it has gone furthest
  // (a run parked on one computer and queued on another is parked: it is waiting for its turn).
  const rank: Record<RunPlace['state'], number> = { running: 0, claimed: 0, claiming: 1, parked: 2, retrying: 3, queued: 4 };
  const furthest = new Map<string, RunPlace['state']>();
  for (const lane of rows.values()) {
    for (const run of lane) {
      // A wait left in a computer's queue for a run the board already finished is shown, not counted.
      if (isTerminal(board.runs[run.runId]?.state ?? 'queued')) continue;
      const seen = furthest.get(run.runId);
      if (seen === undefined || rank[run.state] < rank[seen]) furthest.set(run.runId, run.state);
    }
  }
  const counts = { queued: 0, parked: 0, claiming: 0, running: 0 };
  for (const state of furthest.values()) {
    if (state === 'running' || state === 'claimed') counts.running++;
    else if (state === 'claiming') counts.claiming++;
    else if (state === 'parked') counts.parked++;
    else counts.queued++;
  }

  const sessions: SessionView[] = [];
  for (const [computer, lanes] of Object.entries(sources.laneSessions)) {
    for (const [lane, sessionId] of Object.entries(lanes)) sessions.push({ computer, lane, sessionId, close: null });
  }

  const ids = new Set([...Object.keys(board.computers), ...status.board.connected, ...Object.keys(status.computers)]);
  const computers = [...ids].sort().map((id): ComputerView => {
    const queue = status.computers[id];
    return {
      id,
      connected: status.board.connected.includes(id),
      slots: queue?.slots ?? null,
      inUse: queue?.inUse ?? null,
      held: queue?.held ?? false,
      draining: queue?.draining ?? false,
    };
  });

  const claims = status.board.openClaims.map((c) => ({ ...c, lane: board.runs[c.runId]?.lane ?? '?' }));
  return { at, lanes, claims, sessions, computers, counts };
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

export function runFacts(board: BoardState, runId: string): RunFacts | null {
  const run = board.runs[runId];
  if (!run) return null;
  return {
    runId,
    lane: run.lane,
    state: run.state,
    computerId: run.computerId,
    submittedAt: run.submittedAt,
    claimedAt: run.claimedAt,
    error: run.error === null ? null : run.error.slice(0, 300),
  };
}
