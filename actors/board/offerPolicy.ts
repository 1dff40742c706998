import type { OfferTarget } from '../../events/boardReasons.ts';
import { type BoardState, takesWork, workers } from './boardState.ts';
import { hasRepo, laneRepo, servesLane } from './repoRule.ts';

/**
 * Lanes a computer may have offered to it with runs unclaimed before new lanes pass it by
 * (docs/rules.md#dispatch): enough that a computer whose slots free up always has its next run queued,
 * few enough that a computer that does not claim (slots full, scheduler held) does not sit on the
 * queue. Lanes, not runs: a lane's later turns wait for its earlier ones, so a long lane is one thing
 * to claim, and must not keep other lanes from a computer with free slots.
 */
export const WINDOW = 8;

/** Whom a lane's runs are offered to: one computer, or nobody yet, and why, in words the audit shows. */
export interface Choice {
  readonly computer: string | null;
  readonly why: OfferTarget;
}

export interface ChoiceOptions {
  /** Computers that had the run and passed it (refused, draining, silent): not offered it again in this round. */
  readonly tried?: readonly string[];
  /** Runs offered to a computer earlier in the same decision, counted as waiting there. */
  readonly extra?: ReadonlyMap<string, number>;
  /**
   * The lane's unclaimed runs move together (re-offered, pulled): the lane's earlier runs are the ones
   * being placed, so they neither hold a later run where they wait nor keep it unoffered.
   */
  readonly wholeLane?: boolean;
  /** The repository the runs being placed work in: only a computer that announced it may have them (docs/rules.md#workspaces). */
  readonly repo?: string;
}

/**
 * Whom the next offer of `lane` goes to, one computer at a time (docs/rules.md#dispatch). Pure: reads
 * the state only.
 * Of the computers, only those that have the runs' repository (`repo`, see repoRule.ts) are considered.
 * 1. The lane's last computer, while it takes work: its sessions live there.
 * 2. Where the lane's earlier unclaimed run waits: a lane's turns go to one computer, in order. An
 *    earlier run offered to nobody yet keeps the later one unoffered too.
 * 3. Of the computers that take work and have fewer than WINDOW runs waiting, the one with the fewest
 *    runs waiting or held (the most free slots, as far as the board can tell), then the one offered
 *    fewest runs so far (fairness), then by name.
 * Nobody when none is left: the run waits, unoffered, for a computer with room (a claim or a connect),
 * or for one that has its repository.
 */
export function chooseComputer(state: BoardState, lane: string, options: ChoiceOptions = {}): Choice {
  const tried = options.tried ?? [];
  const extra = options.extra ?? new Map<string, number>();
  const queue = state.lanes[lane];
  const last = queue?.lastComputer ?? null;
  const { repo } = options;
  if (last !== null && takesWork(state, last) && hasRepo(state, last, repo) && !tried.includes(last)) {
    return { computer: last, why: { to: 'last.turn', computer: last, lane } };
  }
  const earlier = options.wholeLane ? undefined : queue?.unclaimed[0];
  if (earlier !== undefined) {
    const where = queue!.offer;
    if (where !== undefined && takesWork(state, where) && !tried.includes(where)) {
      return { computer: where, why: { to: 'earlier.waits', computers: [where], earlier } };
    }
    return { computer: null, why: { to: 'earlier.unplaced', earlier } };
  }
  const online = workers(state);
  const able = repo === undefined ? online : online.filter((c) => hasRepo(state, c, repo));
  if (repo !== undefined && able.length === 0 && online.length > 0) return { computer: null, why: { to: 'no.repo', repo } };
  const candidates = able.filter((c) => !tried.includes(c));
  if (candidates.length === 0) {
    return { computer: null, why: { to: 'nobody', tried: tried.length > 0 } };
  }
  let best: string | null = null;
  let bestBusy = Number.POSITIVE_INFINITY;
  let bestOffers = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const waiting = (state.offeredLanes[c] ?? 0) + (extra.get(c) ?? 0);
    if (waiting >= WINDOW) continue;
    const busy = waiting + (state.holding[c] ?? 0);
    const offers = state.computers[c]?.offers ?? 0;
    if (busy < bestBusy || (busy === bestBusy && offers < bestOffers)) {
      best = c;
      bestBusy = busy;
      bestOffers = offers;
    }
  }
  if (best === null) return { computer: null, why: { to: 'all.full', window: WINDOW } };
  return { computer: best, why: { to: 'most.room', computer: best, busy: bestBusy } };
}

/**
 * A lane whose unclaimed runs wait for a computer with room: offered to nobody that takes work, and
 * with no last computer that does and has its repository (its runs would go there). Only one whose
 * turn is free is worth pulling: the runs of a lane with an open turn cannot be claimed yet.
 */
export function waitsForRoom(state: BoardState, lane: string): boolean {
  const queue = state.lanes[lane]!;
  if (queue.holder !== null || queue.unclaimed.length === 0) return false;
  if (queue.offer !== undefined && takesWork(state, queue.offer)) return false;
  return !(queue.lastComputer !== null && servesLane(state, queue.lastComputer, lane));
}

/**
 * The oldest lane waiting for room that `computer` (when given) has the repository of, from `unoffered`
 * (read from its front, not every waiting lane), or null.
 */
export function oldestWaitingForRoom(state: BoardState, except?: string, computer?: string): string | null {
  for (const lane of state.unoffered) {
    if (lane === except || !waitsForRoom(state, lane)) continue;
    if (computer === undefined || hasRepo(state, computer, laneRepo(state, lane))) return lane;
  }
  return null;
}

/** Whether `computer` takes work and has room for another lane, once `leaving` of the lanes offered to it have none unclaimed. */
export function hasRoom(state: BoardState, computer: string, leaving = 0): boolean {
  return takesWork(state, computer) && (state.offeredLanes[computer] ?? 0) - leaving < WINDOW;
}
