import { type BoardLane, type BoardState, isTerminal } from '../actors/board/boardState.ts';
import { WAITS_FOR_EARLIER_TURN } from '../events/queueReasons.ts';
import type { StatusView } from '../projections/statusView.ts';

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
 * One run of a lane, once: a run offered again elsewhere (refused, unanswered, or pushed to every
 * computer by an older board) may wait in several computers' queues, and those copies are folded here
 * into the row of the run, which says where it has gone furthest.
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
  /** Its rows shown: its active turn, and those of its waiting runs that are among the page's first. */
  readonly runs: readonly LaneRow[];
  /** Its rows not shown. */
  readonly more: number;
}

export interface RunCounts {
  readonly queued: number;
  readonly parked: number;
  readonly claiming: number;
  readonly running: number;
}

/**
 * How many rows a page is shown, whatever the queue (docs/web.md#a-large-board): the runs being worked
 * on (running, claiming, claimed: as many as the computers have slots, up to this) and the runs served
 * next, in submission order. The others are counted, not listed.
 */
export const PAGE_ROWS = { active: 100, waiting: 100 } as const;

export interface LaneRows {
  /** The lanes with a row shown, by name. */
  readonly lanes: readonly LaneView[];
  /** Every run of every lane, shown or not. */
  readonly counts: RunCounts;
  readonly more: { readonly lanes: number; readonly runs: number };
}

interface Candidate {
  readonly lane: string;
  readonly order: number;
  readonly row: () => LaneRow;
}

/**
 * The lane rows of the board page: every run is counted, but only the rows shown are made, so that
 * a board of 50,000 queued runs costs a walk of its lanes, not 50,000 rows each time it is drawn
 * (`visit` is shown each lane with runs unclaimed on the way, for what else is read of them). The
 * computers' queues say what is running, claiming, parked (until when) or queued where; the board
 * adds what no computer in this log holds (a claim by a remote computer, a run not pushed yet).
 */
export function laneRows(
  board: BoardState,
  computers: StatusView['computers'],
  visit?: (queue: BoardLane) => void,
  limits: typeof PAGE_ROWS = PAGE_ROWS,
): LaneRows {
  const { places, held } = computerPlaces(board, computers);
  const counts = { queued: 0, parked: 0, claiming: 0, running: 0 };
  const totals = new Map<string, number>();
  const active: Candidate[] = [];
  const waiting = new Smallest<Candidate>(limits.waiting);
  const orderOf = (runId: string) => board.runs[runId]?.submittedOrder ?? Number.MAX_SAFE_INTEGER;
  const tally = (lane: string, state: RunPlace['state'], terminal = false) => {
    totals.set(lane, (totals.get(lane) ?? 0) + 1);
    // A wait left in a computer's queue for a run the board already finished is shown, not counted.
    if (terminal) return;
    if (state === 'running' || state === 'claimed') counts.running++;
    else if (state === 'claiming') counts.claiming++;
    else if (state === 'parked') counts.parked++;
    else counts.queued++;
  };

  for (const [lane, lanePlaces] of places) {
    for (const row of foldCopies(board, lanePlaces)) {
      tally(lane, row.state, isTerminal(board.runs[row.runId]?.state ?? 'queued'));
      const candidate = { lane, order: orderOf(row.runId), row: () => row };
      if (isActive(row.state)) active.push(candidate);
      else waiting.offer(candidate.order, candidate);
    }
  }

  // The board's open turns and the lanes with runs unclaimed, from its indexes: a board keeps every
  // lane it ever had (its last computer), and a walk of them all would grow with its history.
  for (const holder in board.open) {
    const lane = board.runs[holder]?.lane;
    if (lane === undefined || held.has(holder) || board.lanes[lane]?.holder !== holder) continue;
    tally(lane, 'claimed');
    const place: RunPlace = {
      runId: holder,
      state: 'claimed',
      computer: board.runs[holder]?.computerId ?? null,
      until: null,
      why: 'the open turn of its conversation',
    };
    active.push({ lane, order: orderOf(holder), row: () => onBoardOnly(board, place) });
  }
  for (const lane in board.waiting) {
    const l = board.lanes[lane];
    if (l === undefined) continue;
    visit?.(l);
    const told = l.waiters.length > 8 ? new Set(l.waiters) : null;
    for (const runId of l.unclaimed) {
      if (held.has(runId)) continue;
      const parked = told ? told.has(runId) : l.waiters.includes(runId);
      tally(lane, parked ? 'parked' : 'queued');
      const order = orderOf(runId);
      if (!waiting.accepts(order)) continue;
      const place: RunPlace = {
        runId,
        state: parked ? 'parked' : 'queued',
        computer: null,
        until: null,
        why: parked ? `${WAITS_FOR_EARLIER_TURN} (the board answered conversation_busy)` : 'queued on the board: not yet taken by a computer',
      };
      waiting.offer(order, { lane, order, row: () => onBoardOnly(board, place) });
    }
  }

  const shown = [...active.sort((a, b) => a.order - b.order).slice(0, limits.active), ...waiting.items()];
  const byLane = new Map<string, { row: LaneRow; order: number }[]>();
  for (const c of shown) (byLane.get(c.lane) ?? byLane.set(c.lane, []).get(c.lane)!).push({ row: c.row(), order: c.order });
  const lanes = [...byLane.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([lane, rows]): LaneView => {
      rows.sort((x, y) => rank(x.row.state) - rank(y.row.state) || x.order - y.order);
      return { lane, runs: rows.map((r) => r.row), more: (totals.get(lane) ?? 0) - rows.length };
    });
  let total = 0;
  for (const n of totals.values()) total += n;
  return { lanes, counts, more: { lanes: totals.size - lanes.length, runs: total - shown.length } };
}

const isActive = (state: RunPlace['state']) => state === 'running' || state === 'claiming' || state === 'claimed';
const rank = (state: RunPlace['state']) => (isActive(state) ? 0 : 1);

function onBoardOnly(board: BoardState, place: RunPlace): LaneRow {
  return {
    runId: place.runId,
    state: place.state,
    board: board.runs[place.runId]?.state ?? null,
    copies: [place],
    why: place.why,
    until: place.until,
  };
}

/** The `n` items of smallest key offered, in key order; an offer that would not be kept costs one comparison. */
class Smallest<T> {
  private readonly kept: { key: number; item: T }[] = [];
  constructor(private readonly n: number) {}

  accepts(key: number): boolean {
    return this.kept.length < this.n || key < this.kept[this.kept.length - 1]!.key;
  }

  offer(key: number, item: T): void {
    if (!this.accepts(key)) return;
    let at = this.kept.length;
    while (at > 0 && this.kept[at - 1]!.key > key) at--;
    this.kept.splice(at, 0, { key, item });
    if (this.kept.length > this.n) this.kept.pop();
  }

  items(): T[] {
    return this.kept.map((k) => k.item);
  }
}

/** Each computer's copies of runs, by lane, and every run a computer's queue holds (stale copies included). */
function computerPlaces(board: BoardState, computers: StatusView['computers']): { places: Map<string, RunPlace[]>; held: Set<string> } {
  const places = new Map<string, RunPlace[]>();
  const add = (lane: string, place: RunPlace) => (places.get(lane) ?? places.set(lane, []).get(lane)!).push(place);
  const held = new Set<string>();
  for (const [computer, view] of Object.entries(computers)) {
    for (const [lane, l] of Object.entries(view.lanes)) {
      if (l.active) {
        held.add(l.active.runId);
        if (!isStale(board, l.active.runId, computer)) {
          const running = l.active.status === 'running';
          add(lane, {
            runId: l.active.runId,
            state: running ? 'running' : 'claiming',
            computer,
            until: null,
            why: running ? `its turn: running on ${computer}` : `${computer} is asking the board for its claim`,
          });
        }
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
  return { places, held };
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

/** A lane's places on computers as one row per run: active turns first, waiting runs in their queue order. */
function foldCopies(board: BoardState, places: readonly RunPlace[]): LaneRow[] {
  const byRun = new Map<string, RunPlace[]>();
  for (const place of places) (byRun.get(place.runId) ?? byRun.set(place.runId, []).get(place.runId)!).push(place);
  return [...byRun.entries()].map(([runId, copies]) => {
    const sorted = [...copies].sort((a, b) => RANK[a.state] - RANK[b.state]);
    const furthest = sorted[0]!;
    return { runId, state: furthest.state, board: board.runs[runId]?.state ?? null, copies: sorted, why: furthest.why, until: furthest.until };
  });
}

/**
 * A run held by several computers waits in each queue until its claim is answered: when the board
 * already gave it to another one (or it ended), the row says so, so a stale wait is not mistaken for
 * the run's state.
 */
function elsewhere(board: BoardState, runId: string, computer: string): string {
  const run = board.runs[runId];
  if (!run || run.state === 'queued') return '';
  return ` (on the board: ${run.state}${run.computerId && run.computerId !== computer ? ` on ${run.computerId}` : ''})`;
}
