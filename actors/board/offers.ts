import type { NewDomainEvent } from '../../events/catalog.ts';
import { type BoardRun, type BoardState, isConnected } from './boardState.ts';

/**
 * Who a lane's runs are pushed to (SPEC section 7): while the computer that ran the lane's last turn
 * is connected, to it only (its sessions live there); otherwise to every connected computer.
 */
export interface Targets {
  readonly computers: readonly string[];
  /** Why these: the half of an offer's reason that names who. */
  readonly why: string;
}

export function offerTargets(state: BoardState, lane: string): Targets {
  const preferred = state.lanes[lane]?.lastComputer ?? null;
  if (preferred !== null && isConnected(state, preferred)) {
    return { computers: [preferred], why: `to ${preferred}, which ran the last turn of lane ${lane}` };
  }
  return { computers: state.connected, why: `to every connected computer (${state.connected.length})` };
}

/** The `board.run.offered` decision for `run`, or nothing when there is no one to push it to. */
export function offer(run: Pick<BoardRun, 'runId' | 'lane' | 'agentId'>, computers: readonly string[], at: number, reason: string): NewDomainEvent[] {
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
 * A connecting computer is offered every unclaimed run it is a target of, oldest first: all of them,
 * except those of lanes whose last computer is another connected one (they stay with it).
 */
export function offersOnConnect(state: BoardState, computerId: string, at: number): NewDomainEvent[] {
  const runs: BoardRun[] = [];
  for (const lane of Object.keys(state.waiting)) {
    const preferred = state.lanes[lane]!.lastComputer;
    if (preferred !== null && preferred !== computerId && isConnected(state, preferred)) continue;
    for (const runId of state.lanes[lane]!.unclaimed) runs.push(state.runs[runId]!);
  }
  runs.sort((a, b) => a.submittedOrder - b.submittedOrder);
  return runs.flatMap((run) => offer(run, [computerId], at, `re-offered: computer ${computerId} connected`));
}

/**
 * A lane's last computer left: its unclaimed runs were offered to it alone, so they now go to every
 * other connected computer that has not had them, or they would wait for it to come back.
 */
export function offersOnDisconnect(state: BoardState, computerId: string, at: number): NewDomainEvent[] {
  const others = state.connected.filter((c) => c !== computerId);
  if (others.length === 0) return [];
  const runs: BoardRun[] = [];
  for (const lane of Object.keys(state.waiting)) {
    if (state.lanes[lane]!.lastComputer !== computerId) continue;
    for (const runId of state.lanes[lane]!.unclaimed) runs.push(state.runs[runId]!);
  }
  runs.sort((a, b) => a.submittedOrder - b.submittedOrder);
  return runs.flatMap((run) => {
    const fresh = others.filter((c) => !run.offeredTo.includes(c));
    return offer(run, fresh, at, `re-offered: computer ${computerId}, which ran the last turn of lane ${run.lane}, disconnected`);
  });
}

/**
 * The open turn of `run`'s lane ended (`run` is about to be terminal): every run told
 * `conversation_busy` while it lasted has its frame resent, so a computer that parked it claims at once.
 */
export function offersOnTurnEnd(state: BoardState, run: BoardRun, at: number, how: string): NewDomainEvent[] {
  const lane = state.lanes[run.lane]!;
  if (lane.holder !== run.runId) return [];
  const targets = offerTargets(state, run.lane);
  return lane.waiters
    .map((id) => state.runs[id]!)
    .filter((waiter) => waiter.state === 'queued')
    .sort((a, b) => a.submittedOrder - b.submittedOrder)
    .flatMap((waiter) => offer(waiter, targets.computers, at, `resent: the turn it waited for (run ${run.runId}) ${how}; ${targets.why}`));
}
