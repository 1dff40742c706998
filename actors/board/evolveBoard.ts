import type { DomainEvent, EventOf, TypesOutside } from '../../events/catalog.ts';
import { ignoreRest } from '../../events/exhaustive.ts';
import { type BoardLane, type BoardRun, type BoardState, sortedIndex } from './boardState.ts';
import { runsPushedOnConnect } from './offers.ts';
import { lanesPushedOnConnect } from './oneOffer.ts';
import { recordAnnouncement } from './repoRule.ts';

/**
 * Folds one of the board's events into its state, in place (see Projection). Only decisions change
 * the state: an input is a request, and what it did is in the decisions taken from it.
 */
export function evolveBoard(state: BoardState, event: DomainEvent): BoardState {
  switch (event.type) {
    case 'board.run.queued':
      queueRun(state, event);
      break;
    case 'board.run.offered': {
      const run = state.runs[event.data.runId]!;
      const { computers } = event.data;
      for (const computer of computers) markOffered(state, run, computer);
      // One computer at a time: the lane's later runs follow it there (several at once: older offers).
      offerLaneTo(state, run.lane, computers.length === 1 ? computers[0]! : undefined);
      break;
    }
    case 'board.run.claimed':
      claimRun(state, event);
      break;
    case 'board.run.running':
      state.runs[event.data.runId]!.state = 'running';
      break;
    case 'adoption.adopted': {
      // The lane's next turns run in the adopted session, so they are offered to its computer first.
      const lane = (state.lanes[event.data.lane] ??= { unclaimed: [], holder: null, waiters: [], lastComputer: null });
      lane.lastComputer = event.data.computerId;
      break;
    }
    case 'board.run.replied': {
      const run = state.runs[event.data.runId]!;
      run.reply = event.data.text;
      // A reply is a sign of life as good as a heartbeat: the run is running.
      if (run.state === 'claimed') run.state = 'running';
      break;
    }
    case 'board.run.cancel.requested':
      state.runs[event.data.runId]!.cancelRequested = true;
      break;
    case 'board.run.cancelled':
    case 'board.run.finished':
    case 'board.run.resolved':
      endRun(state, event);
      break;
    case 'board.request.refused':
      if (event.data.code === 'conversation_busy') {
        const run = state.runs[event.data.runId!]!;
        const lane = state.lanes[run.lane]!;
        if (!lane.waiters.includes(run.runId)) lane.waiters.push(run.runId);
      }
      break;
    case 'board.computer.registered':
    case 'board.computer.online':
    case 'board.computer.offline':
    case 'board.computer.draining':
      evolveComputer(state, event);
      break;
    // The board's inputs: requests, whose effect is in the decisions taken from them.
    case 'board.run.submitted':
    case 'board.computer.added':
    case 'board.computer.connected':
    case 'board.computer.disconnected':
    case 'board.claim.requested':
    case 'board.offer.declined':
    case 'board.heartbeat.lapsed':
    case 'board.offer.stale':
    case 'board.cancel.requested':
    case 'board.run.started':
    case 'board.reply.received':
    case 'board.completion.received':
    // Answers that change nothing: a retried submission, a request repeated.
    case 'board.run.deduplicated':
    case 'board.request.repeated':
    // A lane's adoption matters to the board only once adopted.
    case 'adoption.requested':
    case 'adoption.released':
    case 'adoption.listing.read':
    case 'adoption.bind.ended':
    case 'adoption.claimed':
    case 'adoption.waiting':
    case 'adoption.failed':
      break;
    default:
      ignoreRest<TypesOutside<'board' | 'adoption'>>(event);
      break;
  }
  return state;
}

/** A submitted run is queued in its lane, and its idempotency key kept. */
function queueRun(state: BoardState, event: EventOf<'board.run.queued'>): void {
  const { runId, lane, prompt, agentId, timeoutS, submittedOrder, idempotencyKey, repo, base } = event.data;
  const where = { ...(repo === undefined ? {} : { repo }), ...(base === undefined ? {} : { base }) };
  state.submitted = Math.max(state.submitted, submittedOrder + 1);
  state.runs[runId] = {
    runId,
    lane,
    prompt,
    agentId,
    timeoutS,
    ...where,
    submittedOrder,
    submittedAt: event.at,
    state: 'queued',
    computerId: null,
    incarnation: null,
    claimedAt: null,
    cancelRequested: false,
    offeredTo: [],
    reply: null,
  };
  if (idempotencyKey !== undefined) state.idempotency[idempotencyKey] = { runId, lane, prompt, agentId, timeoutS, ...where };
  const queue = (state.lanes[lane] ??= { unclaimed: [], holder: null, waiters: [], lastComputer: null });
  queue.unclaimed.push(runId);
  state.waiting[lane] = true;
  // Its first unclaimed run, offered to nobody yet: the lane waits for one (its offer, if any, follows).
  if (queue.unclaimed.length === 1 && queue.offer === undefined) state.unoffered.push(lane);
}

/** A computer claims the run: it holds its lane's turn. */
function claimRun(state: BoardState, event: EventOf<'board.run.claimed'>): void {
  const { runId, computerId } = event.data;
  const run = state.runs[runId]!;
  const lane = leaveUnclaimed(state, run);
  run.state = 'claimed';
  run.computerId = computerId;
  run.incarnation = event.data.incarnation ?? null;
  if (event.data.bound) run.bound = true;
  run.claimedAt = event.at;
  lane.holder = runId;
  lane.lastComputer = computerId;
  state.open[runId] = true;
  state.holding[computerId] = (state.holding[computerId] ?? 0) + 1;
}

/** A run ends: cancelled (perhaps before it was claimed), finished as its computer reported, or resolved by the board. */
function endRun(state: BoardState, event: EventOf<'board.run.cancelled' | 'board.run.finished' | 'board.run.resolved'>): void {
  switch (event.type) {
    case 'board.run.cancelled': {
      const run = state.runs[event.data.runId]!;
      leaveUnclaimed(state, run);
      run.state = 'cancelled';
      settle(state, run);
      break;
    }
    case 'board.run.finished': {
      const run = state.runs[event.data.runId]!;
      run.state = event.data.state;
      endTurn(state, run);
      settle(state, run);
      break;
    }
    case 'board.run.resolved': {
      const run = state.runs[event.data.runId]!;
      run.state = 'resolved';
      endTurn(state, run);
      settle(state, run);
      break;
    }
  }
}

/** A computer registered, online on its push stream, offline, or draining. */
function evolveComputer(
  state: BoardState,
  event: EventOf<'board.computer.registered' | 'board.computer.online' | 'board.computer.offline' | 'board.computer.draining'>,
): void {
  switch (event.type) {
    case 'board.computer.registered':
      state.computers[event.data.computerId] = { tokenHash: event.data.tokenHash, connectedAt: null, lastSeenAt: null };
      break;
    case 'board.computer.online': {
      // Its frames are pushed from this state, not recorded one by one (a reconnect costs one event):
      // the runs it is pushed count as offered to it, as an offer's would.
      const { computerId, repos } = event.data;
      if (event.data.oneOffer) {
        for (const lane of lanesPushedOnConnect(state, computerId, repos)) {
          const queue = state.lanes[lane]!;
          for (const runId of queue.unclaimed) markOffered(state, state.runs[runId]!, computerId);
          offerLaneTo(state, lane, computerId);
        }
      } else for (const run of runsPushedOnConnect(state, computerId)) markOffered(state, run, computerId);
      insertSorted(state.connected, computerId);
      delete state.draining[computerId];
      const computer = state.computers[computerId]!;
      computer.connectedAt = event.at;
      if (event.data.board === undefined) delete computer.via;
      else computer.via = event.data.board;
      if (event.data.incarnation === undefined) delete computer.incarnation;
      else computer.incarnation = event.data.incarnation;
      recordAnnouncement(state, computerId, repos);
      break;
    }
    case 'board.computer.offline': {
      const { computerId, lastSeenAt } = event.data;
      const i = sortedIndex(state.connected, computerId);
      if (state.connected[i] === computerId) state.connected.splice(i, 1);
      delete state.draining[computerId];
      const computer = state.computers[computerId]!;
      computer.connectedAt = null;
      computer.lastSeenAt = lastSeenAt ?? event.at;
      delete computer.via;
      delete computer.incarnation;
      // What was offered to it is offered to nobody now: a computer with room may take it.
      for (const lane in state.waiting) if (state.lanes[lane]!.offer === computerId) offerLaneTo(state, lane, undefined);
      break;
    }
    case 'board.computer.draining':
      state.draining[event.data.computerId] = true;
      break;
  }
}

/**
 * A terminal run leaves the state (issue 16): the state holds what is live, so a board's start and
 * its checkpoints cost what is live, not every run ever handled. What a later request or `GET` wants
 * of it (its end, holder, reply, usage) is in its stream, read through the stream's index
 * (`settledRun`); only its count by state stays, for `/metrics`.
 */
function settle(state: BoardState, run: BoardRun): void {
  delete state.runs[run.runId];
  state.settled[run.state] = (state.settled[run.state] ?? 0) + 1;
}

/** `run` was pushed to `computer`: it counts among what the computer has waiting, once. */
function markOffered(state: BoardState, run: BoardRun, computer: string): void {
  if (!insertSorted(run.offeredTo, computer)) return;
  state.pushed[computer] = (state.pushed[computer] ?? 0) + 1;
  const known = state.computers[computer];
  if (known) known.offers = (known.offers ?? 0) + 1;
}

/** The lane's unclaimed runs are offered to `computer` now (undefined: to nobody, or to several at once), counted in its `offeredLanes`. */
function offerLaneTo(state: BoardState, id: string, computer: string | undefined): void {
  const lane = state.lanes[id]!;
  const was = lane.offer;
  if (was === computer) {
    // Offered to nobody, and now without unclaimed runs: it waits for nothing.
    if (computer === undefined && lane.unclaimed.length === 0) removeLane(state.unoffered, id);
    return;
  }
  if (was !== undefined) decrement(state.offeredLanes, was);
  else removeLane(state.unoffered, id);
  if (computer === undefined) {
    delete lane.offer;
    if (lane.unclaimed.length > 0) state.unoffered.push(id);
  } else {
    lane.offer = computer;
    state.offeredLanes[computer] = (state.offeredLanes[computer] ?? 0) + 1;
  }
}

/** Removes a lane from `unoffered`: taken from its front (the oldest) or just added at its back, mostly. */
function removeLane(list: string[], id: string): void {
  if (list[0] === id) {
    list.shift();
    return;
  }
  const i = list.lastIndexOf(id);
  if (i !== -1) list.splice(i, 1);
}

function decrement(counts: Record<string, number>, key: string): void {
  const left = (counts[key] ?? 0) - 1;
  if (left > 0) counts[key] = left;
  else delete counts[key];
}

/** A run leaves its lane's unclaimed queue (claimed or cancelled); the lane leaves `waiting` once empty. */
function leaveUnclaimed(state: BoardState, run: BoardRun): BoardLane {
  const lane = state.lanes[run.lane]!;
  removeFrom(lane.unclaimed, run.runId);
  removeFrom(lane.waiters, run.runId);
  if (lane.unclaimed.length === 0) {
    delete state.waiting[run.lane];
    offerLaneTo(state, run.lane, undefined);
  }
  for (const computer of run.offeredTo) decrement(state.pushed, computer);
  return lane;
}

/** The lane's open turn is over: the next claim of the lane is free to succeed. Its waiters were resent. */
function endTurn(state: BoardState, run: BoardRun): void {
  const lane = state.lanes[run.lane]!;
  if (lane.holder === run.runId) {
    lane.holder = null;
    lane.waiters = [];
  }
  if (state.open[run.runId] && run.computerId !== null) decrement(state.holding, run.computerId);
  delete state.open[run.runId];
}

function removeFrom(list: string[], value: string): void {
  const i = list.indexOf(value);
  if (i !== -1) list.splice(i, 1);
}

/** Inserts `value` where it sorts; false when it was there already. */
function insertSorted(list: string[], value: string): boolean {
  const i = sortedIndex(list, value);
  if (list[i] === value) return false;
  list.splice(i, 0, value);
  return true;
}
