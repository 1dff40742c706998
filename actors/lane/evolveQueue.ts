import type { DomainEvent, EventData, EventOf, TypesOutside } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { ignoreRest } from '../../events/exhaustive.ts';
import { candidateOf, loginOf, type QueueState } from './queueState.ts';
import { popReady, pushReady } from './readyHeap.ts';

/** Folds one event into a computer's queue. Updates `state` in place (see Projection) and returns it. */
export function evolveQueue(state: QueueState, event: DomainEvent): QueueState {
  const at = event.at;
  switch (event.type) {
    case 'computer.configured':
    case 'computer.started':
    case 'scheduler.held':
    case 'drain.started':
      configure(state, event);
      break;
    case 'frame.received':
      noteResent(state, event);
      break;
    case 'run.queued':
      queueRun(state, event.data, at);
      break;
    case 'run.claim.started': {
      const run = takeTurn(state, event.data.runId, 'claiming');
      run.resentWhileClaiming = false;
      if (run.claimLife === undefined) run.claimLife = event.data.incarnation ?? null;
      break;
    }
    case 'run.claimed':
      state.runs[event.data.runId]!.status = 'running';
      break;
    case 'run.limit.waiting':
      waitOutLimit(state, event.data, at);
      break;
    case 'run.limit.resumed': {
      const run = takeTurn(state, event.data.runId, 'running');
      run.notBefore = 0;
      delete run.claimHeld;
      break;
    }
    case 'run.parked':
    case 'run.claim.retrying':
    case 'run.requeued':
    case 'run.unparked':
      waitAgain(state, event, at);
      break;
    case 'timer.fired':
      wake(state, event.data.runId, at);
      break;
    case 'run.skipped':
    case 'run.withdrawn':
      settle(state, event.data.runId, at);
      break;
    case 'run.ended': {
      // A turn of the login that ended well: its limits are no longer consecutive.
      const run = state.runs[event.data.runId];
      const limit = run && state.loginLimits?.[loginOf(run)];
      if (event.data.ok && limit && limit.until <= at) delete state.loginLimits![loginOf(run)];
      settle(state, event.data.runId, at);
      break;
    }
    // Inputs whose effect is in their decisions, and the answers to frames.
    case 'frame.refused':
    case 'claim.answered':
    case 'run.start.failed':
    case 'run.execution.ended':
    case 'run.limit.reported':
    case 'login.limit.due':
    case 'frame.acknowledged':
      return state;
    default:
      ignoreRest<TypesOutside<'queue'>>(event);
      return state;
  }
  dropStaleTop(state, at);
  return state;
}

/** The computer's settings, its life, a hold and a drain. */
function configure(state: QueueState, event: EventOf<'computer.configured' | 'computer.started' | 'scheduler.held' | 'drain.started'>): void {
  switch (event.type) {
    case 'computer.configured':
      state.slots = event.data.slots;
      state.loginCapacity = event.data.loginCapacity;
      return;
    case 'computer.started':
      // A new life: the last one's drain ended with it. A hold the user set is not the life's: it stays.
      state.draining = false;
      state.incarnation = event.data.incarnation;
      return;
    case 'scheduler.held':
      state.held = event.data.held;
      return;
    case 'drain.started':
      state.draining = true;
  }
}

/** A frame that resends a run whose claim is in flight makes a busy answer to that claim stale. */
function noteResent(state: QueueState, event: EventOf<'frame.received'>): void {
  const run = state.runs[event.data.runId];
  // A frame addressed to another computer is acknowledged as ignored: it makes no busy answer stale.
  const forUs = event.data.computerId === undefined || event.data.computerId === parseStream(event.stream).owner;
  if (event.data.kind === 'run.requested' && forUs && run?.status === 'claiming') run.resentWhileClaiming = true;
}

/** A run waits in its lane again: parked, retrying its claim, back after a start that failed, or free to go again. */
function waitAgain(state: QueueState, event: EventOf<'run.parked' | 'run.claim.retrying' | 'run.requeued' | 'run.unparked'>, at: number): void {
  const run = event.type === 'run.unparked' ? state.runs[event.data.runId]! : backToWaiting(state, event.data.runId);
  if (event.type === 'run.parked') run.busyWaits = event.data.busyWaits;
  if (event.type === 'run.claim.retrying') run.claimAttempts = event.data.claimAttempts;
  run.notBefore = event.type === 'run.parked' || event.type === 'run.claim.retrying' ? event.data.notBefore : 0;
  offerLane(state, run.lane, at);
}

/**
 * Its wait is over, whatever the `at` of what is folded next: a message carries its decision's `at`,
 * which may be earlier than this timer's. Judged due only by time, the run would read as not due yet
 * then, its lane would be dropped from the ready heap as stale, and no timer is left to put it back
 * (issue 17: a lane's next turn left queued for ever after a 503).
 */
function wake(state: QueueState, runId: string, at: number): void {
  const run = state.runs[runId];
  if (!run) return;
  if (run.status === 'waiting' && run.notBefore <= at) run.notBefore = 0;
  offerLane(state, run.lane, at);
}

function queueRun(state: QueueState, { runId, lane, agentId, arrival }: EventData<'run.queued'>, at: number): void {
  state.arrivals = Math.max(state.arrivals, arrival + 1);
  state.runs[runId] = {
    runId,
    lane,
    agentId,
    arrival,
    status: 'waiting',
    claimAttempts: 0,
    busyWaits: 0,
    notBefore: 0,
    resentWhileClaiming: false,
  };
  const queue = (state.lanes[lane] ??= { waiting: [], active: null });
  queue.waiting.push(runId);
  offerLane(state, lane, at);
}

/** A waiting run takes its lane's turn and a slot: claiming it, or running again after a usage limit. */
function takeTurn(state: QueueState, runId: string, status: 'claiming' | 'running') {
  const run = state.runs[runId]!;
  const queue = state.lanes[run.lane]!;
  queue.waiting.splice(queue.waiting.indexOf(run.runId), 1);
  queue.active = run.runId;
  run.status = status;
  takeSlot(state, loginOf(run), +1);
  return run;
}

/** A claimed run waits out its login's usage limit in its old place, and its login starts nothing until then. */
function waitOutLimit(state: QueueState, { runId, login, notBefore, strikes, words }: EventData<'run.limit.waiting'>, at: number): void {
  const run = backToWaiting(state, runId);
  run.notBefore = notBefore;
  run.claimHeld = true;
  // Claimed, it is not parked: it holds its lane's turn (a busy wait before its claim is over).
  run.busyWaits = 0;
  (state.loginLimits ??= {})[login] = { until: notBefore, strikes, words };
  offerLane(state, run.lane, at);
}

/** Pushes the lane's current candidate, if it has one, so the next pick can find it. */
function offerLane(state: QueueState, lane: string, at: number): void {
  const candidate = candidateOf(state, lane, at);
  if (candidate) pushReady(state.ready, [candidate.arrival, lane]);
}

/** A run that was claiming or running gives back its slot and its lane, and waits in its old place. */
function backToWaiting(state: QueueState, runId: string) {
  const run = state.runs[runId]!;
  const queue = state.lanes[run.lane]!;
  if (run.status !== 'waiting') {
    takeSlot(state, loginOf(run), -1);
    if (queue.active === runId) queue.active = null;
    run.status = 'waiting';
    const place = queue.waiting.findIndex((id) => state.runs[id]!.arrival > run.arrival);
    queue.waiting.splice(place === -1 ? queue.waiting.length : place, 0, runId);
  }
  return run;
}

/**
 * The run leaves the queue, and with it the state: how it ended is in the log, where the shell looks it
 * up for a later frame of it (see HandledLookup), so the state stays bounded by what is live (issue 16).
 */
function settle(state: QueueState, runId: string, at: number): void {
  const run = state.runs[runId];
  if (!run) return;
  const queue = state.lanes[run.lane]!;
  if (run.status === 'waiting') {
    queue.waiting.splice(queue.waiting.indexOf(runId), 1);
  } else {
    takeSlot(state, loginOf(run), -1);
    if (queue.active === runId) queue.active = null;
  }
  delete state.runs[runId];
  if (queue.waiting.length === 0 && queue.active === null) delete state.lanes[run.lane];
  else offerLane(state, run.lane, at);
}

function takeSlot(state: QueueState, login: string, delta: 1 | -1): void {
  state.inUse += delta;
  const used = (state.loginsInUse[login] ?? 0) + delta;
  if (used > 0) state.loginsInUse[login] = used;
  else delete state.loginsInUse[login];
}

/** Entries whose lane no longer offers that candidate are dropped as they reach the top. */
function dropStaleTop(state: QueueState, at: number): void {
  for (;;) {
    const top = state.ready[0];
    if (!top) return;
    const candidate = candidateOf(state, top[1], at);
    if (candidate && candidate.arrival === top[0]) return;
    popReady(state.ready);
    // Time made another run the lane's candidate (a parked turn fell due before its timer fired).
    if (candidate) pushReady(state.ready, [candidate.arrival, top[1]]);
  }
}
