import type { BoardReasonOf } from '../../events/boardReasons.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import type { RepoAnnouncement } from '../../events/workspace.ts';
import { type BoardRun, type BoardState, takesWork } from './boardState.ts';
import { chooseComputer, hasRoom, oldestWaitingForRoom, WINDOW } from './offerPolicy.ts';
import { offer, type TurnEnd } from './offers.ts';
import { announces, laneRepo, servesLane } from './repoRule.ts';

type Offered = NewEventOf<'board.run.offered'>;

/**
 * The board's offers one computer at a time (docs/rules.md#dispatch), for inputs that carry `oneOffer`;
 * `offers.ts` keeps the older rule (every computer with room at once) for the logs decided under it.
 * Who gets an offer is `chooseComputer`'s; these say when, and which runs move together.
 */

/** The repository a move of `lane`'s runs must find, as a `chooseComputer` option (none: its next turn names none). */
function needs(state: BoardState, lane: string): { repo?: string } {
  const repo = laneRepo(state, lane);
  return repo === undefined ? {} : { repo };
}

/** Every unclaimed run of `lane`, oldest first, offered to `computer`. */
function offerLane(state: BoardState, lane: string, computer: string, at: number, reason: BoardReasonOf<'offered'>): Offered[] {
  return state.lanes[lane]!.unclaimed.flatMap((runId) => offer(state.runs[runId]!, [computer], at, reason));
}

/** A new run of `lane`: offered to one computer, or to nobody yet (the `waits` of its queuing says why). */
export function offerOnSubmit(
  state: BoardState,
  run: Pick<BoardRun, 'runId' | 'lane' | 'agentId' | 'repo'>,
  at: number,
): { offers: Offered[]; waits?: BoardReasonOf<'waits'> } {
  const choice = chooseComputer(state, run.lane, run.repo === undefined ? {} : { repo: run.repo });
  if (choice.computer === null) return { offers: [], waits: { code: 'waits', to: choice.why } };
  return { offers: offer(run, [choice.computer], at, { code: 'offered', on: { on: 'submitted' }, to: choice.why }) };
}

/**
 * The lanes a connecting computer is pushed, oldest run first: those offered to it (it reconnects), those
 * whose last turn it ran, and lanes waiting for a computer with room, while it has room (WINDOW). Not
 * a lane whose last computer is another one that takes work (and has its repository), nor one offered
 * to another that does, nor one whose repository `repos`, its announcement, lacks.
 * Read from the state before the connect is folded, when it is decided and folded (never recorded run by run).
 */
export function lanesPushedOnConnect(state: BoardState, computerId: string, repos: RepoAnnouncement | undefined): string[] {
  let room = WINDOW - (state.offeredLanes[computerId] ?? 0);
  const lanes: string[] = [];
  for (const lane in state.waiting) {
    const queue = state.lanes[lane]!;
    if (!announces(repos, laneRepo(state, lane))) continue;
    const last = queue.lastComputer;
    if (last !== null && last !== computerId && servesLane(state, last, lane)) continue;
    if (queue.offer === computerId || last === computerId) {
      lanes.push(lane);
      continue;
    }
    if (queue.offer !== undefined && takesWork(state, queue.offer)) continue;
    if (room <= 0) continue;
    room--;
    lanes.push(lane);
  }
  return lanes;
}

/** The runs whose frames a connected computer is sent: every unclaimed run of the lanes offered to it, oldest first. */
export function runsOfferedTo(state: BoardState, computerId: string): BoardRun[] {
  const runs: BoardRun[] = [];
  for (const lane in state.waiting) {
    const queue = state.lanes[lane]!;
    if (queue.offer !== computerId) continue;
    const last = queue.lastComputer;
    if (last !== null && last !== computerId && servesLane(state, last, lane)) continue;
    for (const runId of queue.unclaimed) runs.push(state.runs[runId]!);
  }
  return runs.sort((a, b) => a.submittedOrder - b.submittedOrder);
}

/**
 * `computerId` disconnected: the lanes offered to it (or whose last turn it ran, offered to nobody
 * else) go to the next computer each, or wait for room. Decided on the state without it.
 */
export function offersOnDisconnect(state: BoardState, computerId: string, at: number): Offered[] {
  const without: BoardState = { ...state, connected: state.connected.filter((c) => c !== computerId) };
  const extra = new Map<string, number>();
  const offers: Offered[] = [];
  for (const lane in state.waiting) {
    const queue = state.lanes[lane]!;
    const stranded = queue.offer === computerId || (queue.lastComputer === computerId && !(queue.offer && takesWork(without, queue.offer)));
    if (!stranded) continue;
    const choice = chooseComputer(without, lane, { extra, wholeLane: true, ...needs(state, lane) });
    if (choice.computer === null) continue;
    extra.set(choice.computer, (extra.get(choice.computer) ?? 0) + 1);
    offers.push(
      ...offerLane(state, lane, choice.computer, at, { code: 'offered', on: { on: 'disconnected', computer: computerId }, to: choice.why }),
    );
  }
  return offers;
}

/**
 * The open turn of `run`'s lane ended: the runs told `conversation_busy` while it lasted are resent to
 * the lane's last computer (it ran the turn), else to where they wait, else to the next computer.
 */
export function offersOnTurnEnd(state: BoardState, run: BoardRun, at: number, how: TurnEnd): Offered[] {
  const lane = state.lanes[run.lane]!;
  if (lane.holder !== run.runId) return [];
  const waiters = lane.waiters
    .map((id) => state.runs[id]!)
    .filter((waiter) => waiter.state === 'queued')
    .sort((a, b) => a.submittedOrder - b.submittedOrder);
  if (waiters.length === 0) return [];
  const where = lane.offer !== undefined && takesWork(state, lane.offer) ? lane.offer : null;
  const lastTakesWork = lane.lastComputer !== null && servesLane(state, lane.lastComputer, run.lane);
  const choice =
    where !== null && !lastTakesWork
      ? { computer: where, why: { to: 'where.it.waits' as const, computer: where } }
      : chooseComputer(state, run.lane, { wholeLane: true, ...needs(state, run.lane) });
  if (choice.computer === null) return [];
  return waiters.flatMap((waiter) =>
    offer(waiter, [choice.computer!], at, { code: 'offered', on: { on: 'turn.ended', run: run.runId, how }, to: choice.why }),
  );
}

/**
 * `computerId` passed the offer of `run` (draining, refused, silent): the run's lane goes to the next
 * computer that has not had it, or waits. A pass from a computer the lane has already moved on from
 * decides nothing. `state` is as it will be once a draining computer is marked so.
 */
export function offersOnDecline(
  state: BoardState,
  run: BoardRun,
  computerId: string,
  reason: 'draining' | 'refused' | 'unanswered',
  at: number,
): Offered[] {
  const lane = state.lanes[run.lane]!;
  if (lane.offer !== undefined && lane.offer !== computerId) return [];
  const choice = chooseComputer(state, run.lane, { tried: run.offeredTo, wholeLane: true, ...needs(state, run.lane) });
  if (choice.computer === null) return [];
  return offerLane(state, run.lane, choice.computer, at, {
    code: 'offered',
    on: { on: 'declined', computer: computerId, why: reason },
    to: choice.why,
  });
}

/** The run stayed unclaimed with its lane free: its lane goes to a computer that has not had it, else to the next one. */
export function offersWhenStale(state: BoardState, run: BoardRun, waitedS: number, at: number): Offered[] {
  let choice = chooseComputer(state, run.lane, { tried: run.offeredTo, wholeLane: true, ...needs(state, run.lane) });
  if (choice.computer === null) choice = chooseComputer(state, run.lane, { wholeLane: true, ...needs(state, run.lane) });
  if (choice.computer === null) return [];
  return offerLane(state, run.lane, choice.computer, at, { code: 'offered', on: { on: 'stale', waitedS }, to: choice.why });
}

/**
 * `computerId` claimed `run`: one place in its window is free again, so the oldest lane waiting for a
 * computer with room is offered to it. This is how a backlog larger than the computers' windows drains.
 */
export function offersOnClaim(state: BoardState, run: BoardRun, computerId: string, at: number): Offered[] {
  const lane = state.lanes[run.lane]!;
  const leaving = lane.offer === computerId && lane.unclaimed.length === 1 ? 1 : 0;
  if (!hasRoom(state, computerId, leaving)) return [];
  const next = oldestWaitingForRoom(state, run.lane, computerId);
  if (next === null) return [];
  return offerLane(state, next, computerId, at, { code: 'offered', on: { on: 'room.again', computer: computerId, claimed: run.runId } });
}
