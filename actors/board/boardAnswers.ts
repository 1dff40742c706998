import { wordBoardReason } from '../../events/boardReasons.ts';
import type { NewDomainEvent } from '../../events/catalog.ts';
import type { BoardState } from './boardState.ts';
import { cancelsPendingOn, runsPushedOnConnect } from './offers.ts';
import { runsOfferedTo } from './oneOffer.ts';

/**
 * The HTTP answer to a request, read from the first decision taken from it (the board puts the answer
 * first, offers after). The body is the server's: a claim's run token is derived outside, from a
 * board secret, and never enters the log.
 */
export type RequestAnswer =
  | { readonly status: 200 | 201 | 202; readonly runId?: string }
  | { readonly status: 404 | 409 | 410 | 422; readonly code: string; readonly reason: string };

/** Null when nothing was decided (an input the board ignores: a late lapse, a repeated start). */
export function requestAnswer(decisions: readonly Pick<NewDomainEvent, 'type' | 'data'>[]): RequestAnswer | null {
  const first = decisions[0] as NewDomainEvent | undefined;
  if (!first) return null;
  switch (first.type) {
    case 'board.run.queued':
    case 'board.run.deduplicated':
      return { status: 201, runId: first.data.runId };
    case 'board.computer.registered':
      return { status: 201 };
    case 'board.run.claimed':
    case 'board.run.replied':
    case 'board.run.finished':
    case 'board.run.running':
    case 'board.run.resolved':
      return { status: 200, runId: first.data.runId };
    case 'board.computer.online':
    case 'board.computer.offline':
      return { status: 200 };
    case 'board.run.cancelled':
    case 'board.run.cancel.requested':
      return { status: 202, runId: first.data.runId };
    case 'board.request.repeated':
      return { status: first.data.status, runId: first.data.runId };
    case 'board.request.refused':
      return { status: first.data.status, code: first.data.code, reason: wordBoardReason(first.data.reason) };
    default:
      throw new Error(`${first.type} is not an answer of the board`);
  }
}

/** A frame the server pushes on one computer's stream (docs/rules.md#wire-and-cli). */
export interface PushFrame {
  readonly computerId: string;
  readonly frame:
    | {
        readonly id: string;
        readonly kind: 'run.requested';
        /** `agent_id` when the run names one: the computer's queue counts (and limits) runs per login by it. */
        readonly data: { run_id: string; lane: string; computer_id: string; agent_id?: string };
      }
    | { readonly id: string; readonly kind: 'run.cancelled' | 'run.cancel_requested' | 'run.withdrawn'; readonly data: { run_id: string } };
}

const loginOf = (agentId: string | null) => (agentId === null ? {} : { agent_id: agentId });

/**
 * The frames a committed decision asks to push, one per computer (per run, for a connect). A frame's
 * id is the decision's seq and the computer (or the run): unique, and the same when a restarted board
 * pushes the decision again. A connect's frames are read from `state`, the board as it stands once
 * the decision is folded: they are not recorded one by one.
 */
export function framesOf(decision: Pick<NewDomainEvent, 'type' | 'data'> & { readonly seq: number }, state: BoardState): PushFrame[] {
  const event = decision as NewDomainEvent & { seq: number };
  switch (event.type) {
    case 'board.computer.online': {
      const { computerId } = event.data;
      const pushed = event.data.oneOffer ? runsOfferedTo(state, computerId) : runsPushedOnConnect(state, computerId);
      const offers: PushFrame[] = pushed.map((run) => ({
        computerId,
        frame: {
          id: `${event.seq}-${run.runId}`,
          kind: 'run.requested',
          data: { run_id: run.runId, lane: run.lane, computer_id: computerId, ...loginOf(run.agentId) },
        },
      }));
      // A cancel pushed while it was away: its heartbeat would tell it, but only up to a heartbeat later.
      const cancels: PushFrame[] = cancelsPendingOn(state, computerId).map((runId) => ({
        computerId,
        frame: { id: `${event.seq}-${runId}`, kind: 'run.cancel_requested', data: { run_id: runId } },
      }));
      return [...offers, ...cancels];
    }
    case 'board.run.cancel.requested':
      return [
        {
          computerId: event.data.computerId,
          frame: { id: `${event.seq}-${event.data.computerId}`, kind: 'run.cancel_requested', data: { run_id: event.data.runId } },
        },
      ];
    case 'board.run.offered':
      return event.data.computers.map((computerId) => ({
        computerId,
        frame: {
          id: `${event.seq}-${computerId}`,
          kind: 'run.requested',
          data: { run_id: event.data.runId, lane: event.data.lane, computer_id: computerId, ...loginOf(event.data.agentId) },
        },
      }));
    case 'board.run.claimed': {
      // Withdrawn at once from the other computers it was offered to: each would otherwise keep its copy
      // waiting (parked behind the lane's open turn, or queued) until its own claim is refused or its
      // timer runs out, and a page reading its queue would show a run that waits for nothing. The frame
      // is derived from the claim, not recorded: the board's log, and its replay, are as they were.
      const run = state.runs[event.data.runId];
      return (run?.offeredTo ?? [])
        .filter((computerId) => computerId !== event.data.computerId)
        .map((computerId) => ({
          computerId,
          frame: { id: `${event.seq}-${computerId}`, kind: 'run.withdrawn', data: { run_id: event.data.runId } },
        }));
    }
    case 'board.run.cancelled':
      return event.data.offeredTo.map((computerId) => ({
        computerId,
        frame: { id: `${event.seq}-${computerId}`, kind: 'run.cancelled', data: { run_id: event.data.runId } },
      }));
    default:
      return [];
  }
}
