import type { BoardReasonOf, OfferTarget } from '../../events/boardReasons.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import { type BoardRun, type BoardState, takesWork, workers } from './boardState.ts';

type Offered = NewEventOf<'board.run.offered'>;
/** How the turn a run waited for ended, as an offer's reason says it. */
export type TurnEnd = Extract<BoardReasonOf<'offered'>['on'], { on: 'turn.ended' }>['how'];

export interface Targets {
  readonly computers: readonly string[];
  /** Why these: the half of an offer's reason that names who. */
  readonly why: OfferTarget;
}

/**
 * A computer with this many runs pushed to it and unclaimed has work waiting: it could not claim them
 * yet (its slots are full, or their turns wait for earlier ones), so it will not take a new one soon.
 */
export const BACKLOG = 8;

/**
 * Who a lane's runs are pushed to (docs/rules.md#wire-and-cli), among the connected computers that take work (a
 * draining one takes none). While the computer that ran the lane's last turn is connected, to it only (its sessions live there). A lane with runs already pushed and unclaimed
 * keeps their computers, so its turns are not spread. A new lane goes to every connected computer
 * with room (fewer than BACKLOG runs waiting): the first one free claims it. When none has room, to the
 * one with the fewest waiting, not to all: each would queue it, and all but one claim be wasted, at the
 * moment claims are what is scarce.
 */
export function offerTargets(state: BoardState, lane: string): Targets {
  const queue = state.lanes[lane];
  const preferred = queue?.lastComputer ?? null;
  if (preferred !== null && takesWork(state, preferred)) {
    return { computers: [preferred], why: { to: 'last.turn', computer: preferred, lane } };
  }
  const connected = workers(state);
  if (connected.length === 0) return { computers: [], why: { to: 'nobody', tried: false } };
  const everyone: Targets = { computers: connected, why: { to: 'everyone', count: connected.length } };
  const earlier = queue?.unclaimed[0];
  const withEarlier = earlier ? state.runs[earlier]!.offeredTo.filter((c) => takesWork(state, c)) : [];
  if (withEarlier.length === connected.length && withEarlier.length > 0) return everyone;
  if (withEarlier.length > 0) {
    return { computers: withEarlier, why: { to: 'earlier.waits', computers: withEarlier, earlier: earlier! } };
  }
  const withRoom = connected.filter((c) => (state.pushed[c] ?? 0) < BACKLOG);
  if (withRoom.length === connected.length) return everyone;
  if (withRoom.length > 0) {
    return { computers: withRoom, why: { to: 'with.room', computers: withRoom, backlog: BACKLOG } };
  }
  const leastWaiting = connected.reduce((best, c) => ((state.pushed[c] ?? 0) < (state.pushed[best] ?? 0) ? c : best));
  return {
    computers: [leastWaiting],
    why: { to: 'fewest.waiting', computer: leastWaiting, waiting: state.pushed[leastWaiting] ?? 0, backlog: BACKLOG },
  };
}

/** The `board.run.offered` decision for `run`, or nothing when there is no one to push it to. */
export function offer(
  run: Pick<BoardRun, 'runId' | 'lane' | 'agentId'>,
  computers: readonly string[],
  at: number,
  reason: BoardReasonOf<'offered'>,
): Offered[] {
  if (computers.length === 0) return [];
  return [
    {
      stream: `run:${run.runId}`,
      at,
      type: 'board.run.offered',
      data: { runId: run.runId, lane: run.lane, agentId: run.agentId, computers: [...computers], reason },
    },
  ];
}

/**
 * The runs a connecting computer is pushed, oldest first: every unclaimed run, except those of lanes
 * whose last computer is another connected one taking work (they stay with it). Read from the state,
 * when `board.computer.online` is folded and when its frames are sent, and never recorded run by run:
 * a computer that reconnects costs one event however long the queue (docs/rules.md#the-log).
 */
export function runsPushedOnConnect(state: BoardState, computerId: string): BoardRun[] {
  const runs: BoardRun[] = [];
  for (const lane of Object.keys(state.waiting)) {
    const preferred = state.lanes[lane]!.lastComputer;
    if (preferred !== null && preferred !== computerId && takesWork(state, preferred)) continue;
    for (const runId of state.lanes[lane]!.unclaimed) runs.push(state.runs[runId]!);
  }
  return runs.sort((a, b) => a.submittedOrder - b.submittedOrder);
}

/** Claimed runs `computerId` holds whose cancel is pending: read from the open claims, not from every run. */
export function cancelsPendingOn(state: BoardState, computerId: string): string[] {
  return Object.keys(state.open).filter((runId) => {
    const run = state.runs[runId]!;
    return run.computerId === computerId && run.cancelRequested;
  });
}

/**
 * A lane's last computer left: its unclaimed runs were offered to it alone, so they now go to every
 * other connected computer that has not had them, or they would wait for it to come back.
 */
export function offersOnDisconnect(state: BoardState, computerId: string, at: number): Offered[] {
  const others = workers(state).filter((c) => c !== computerId);
  if (others.length === 0) return [];
  const runs: BoardRun[] = [];
  for (const lane of Object.keys(state.waiting)) {
    if (state.lanes[lane]!.lastComputer !== computerId) continue;
    for (const runId of state.lanes[lane]!.unclaimed) runs.push(state.runs[runId]!);
  }
  runs.sort((a, b) => a.submittedOrder - b.submittedOrder);
  return runs.flatMap((run) => {
    const fresh = others.filter((c) => !run.offeredTo.includes(c));
    return offer(run, fresh, at, { code: 'offered', on: { on: 'left.last.turn', computer: computerId, lane: run.lane } });
  });
}

/**
 * The open turn of `run`'s lane ended (`run` is about to be terminal): every run told
 * `conversation_busy` while it lasted has its frame resent, so a computer that parked it claims at once.
 */
export function offersOnTurnEnd(state: BoardState, run: BoardRun, at: number, how: TurnEnd): Offered[] {
  const lane = state.lanes[run.lane]!;
  if (lane.holder !== run.runId) return [];
  const targets = offerTargets(state, run.lane);
  return lane.waiters
    .map((id) => state.runs[id]!)
    .filter((waiter) => waiter.state === 'queued')
    .sort((a, b) => a.submittedOrder - b.submittedOrder)
    .flatMap((waiter) => offer(waiter, targets.computers, at, { code: 'offered', on: { on: 'turn.ended', run: run.runId, how }, to: targets.why }));
}

/**
 * `computerId` declined `run`'s frame because it drains: the run goes at once to whom it would go were
 * that computer gone, those that have not had it. Read on the state as it will be once it drains.
 */
export function offersOnDecline(state: BoardState, run: BoardRun, computerId: string, at: number): Offered[] {
  const drained: BoardState = { ...state, draining: { ...state.draining, [computerId]: true } };
  const targets = offerTargets(drained, run.lane);
  const fresh = targets.computers.filter((c) => !run.offeredTo.includes(c));
  return offer(run, fresh, at, { code: 'offered', on: { on: 'declined', computer: computerId, why: 'draining' }, to: targets.why });
}
