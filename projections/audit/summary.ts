import { type DomainEvent, type EventType, eventDefinitions } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import type { Projection } from '../projection.ts';

/** How often each reason was given; past `MAX_REASONS` distinct ones, the rest are counted together. */
export interface Tally {
  count: number;
  reasons: Record<string, number>;
}

export const MAX_REASONS = 50;
export const OTHER_REASONS = '(other reasons)';

export interface LaneTimes {
  /** Runs queued in this lane, on any computer. */
  runs: number;
  /** Time runs waited for a slot or their turn, not parked (claim retries included). */
  queuedMs: number;
  /** Time runs were parked: told `conversation_busy`, until their `notBefore` or their unpark. */
  parkedMs: number;
  parks: number;
  claimRetries: number;
}

/** A run on a computer whose waiting time is still being counted. */
export interface Waiting {
  readonly lane: string;
  /** Since when it waits; null while it is being claimed or runs. */
  since: number | null;
  /** While parked: its `notBefore`. */
  parkedUntil: number | null;
}

/**
 * The audit summary of the whole log (`runledger audit` with no id): runs by outcome on the board and
 * on the computers, time queued and parked per lane, claims retried; and the sections for session
 * closes, hooks and notices, which fill once their events are part of the log format.
 */
export interface AuditSummary {
  /** The time of the last event folded: what waits still open are counted up to. */
  lastAt: number;
  board: {
    submitted: number;
    deduplicated: number;
    outcomes: { succeeded: number; failed: number; cancelled: number; resolved: number };
    /** Requests refused, by code. */
    refused: Record<string, number>;
  };
  computers: {
    queued: number;
    outcomes: { ended: Tally; skipped: Tally; withdrawn: Tally };
    /** Per computer: how many runs ended, were skipped, were withdrawn there. */
    byComputer: Record<string, { ended: number; skipped: number; withdrawn: number }>;
    claimsRetried: number;
    parks: number;
  };
  lanes: Record<string, LaneTimes>;
  /** By `<computer>/<run>`. */
  waiting: Record<string, Waiting>;
  /** Filled by the session, hook and notification events once they land (see `roleOf`). */
  sessions: { closesDeferred: Tally; closesFailed: Tally };
  hooks: { delivered: number; failed: number };
  notices: { delivered: number; failed: number };
}

/** What the summary cannot count yet: no event type of the log records it. */
export const AWAITING_EVENTS = ['session closes deferred and failed', 'hooks delivered', 'notices delivered'] as const;

const tally = (): Tally => ({ count: 0, reasons: {} });

export function initialAuditSummary(): AuditSummary {
  return {
    lastAt: 0,
    board: { submitted: 0, deduplicated: 0, outcomes: { succeeded: 0, failed: 0, cancelled: 0, resolved: 0 }, refused: {} },
    computers: { queued: 0, outcomes: { ended: tally(), skipped: tally(), withdrawn: tally() }, byComputer: {}, claimsRetried: 0, parks: 0 },
    lanes: {},
    waiting: {},
    sessions: { closesDeferred: tally(), closesFailed: tally() },
    hooks: { delivered: 0, failed: 0 },
    notices: { delivered: 0, failed: 0 },
  };
}

type Role = 'board' | 'queue' | 'none';

/**
 * Which events the summary reads. Exhaustive: an event type added to the catalog does not compile until
 * it is placed here, so a session close, a hook or a notice cannot land without being counted.
 */
function roleOf(type: EventType): Role {
  switch (type) {
    case 'board.run.queued':
    case 'board.run.deduplicated':
    case 'board.run.finished':
    case 'board.run.resolved':
    case 'board.run.cancelled':
    case 'board.request.refused':
      return 'board';
    case 'run.queued':
    case 'run.claim.started':
    case 'run.parked':
    case 'run.unparked':
    case 'run.claim.retrying':
    case 'run.requeued':
    case 'run.ended':
    case 'run.skipped':
    case 'run.withdrawn':
      return 'queue';
    // Inputs, and decisions whose outcome shows in one of the above.
    case 'counter.bump.requested':
    case 'counter.bumped':
    case 'counter.bump.refused':
    case 'counter.milestone.reached':
    case 'outbox.taken':
    case 'outbox.performed':
    case 'outbox.interrupted':
    case 'computer.configured':
    case 'scheduler.held':
    case 'drain.started':
    case 'frame.received':
    case 'frame.refused':
    case 'claim.answered':
    case 'timer.fired':
    case 'run.start.failed':
    case 'run.execution.ended':
    case 'frame.acknowledged':
    case 'run.claimed':
    case 'run.handed.over':
    case 'run.process.began':
    case 'run.session.announced':
    case 'run.process.exited':
    case 'run.heartbeat.answered':
    case 'run.completion.answered':
    case 'run.reply.refused':
    case 'run.completion.due':
    case 'run.found.interrupted':
    case 'run.shutdown.before.start':
    case 'run.execution.requested':
    case 'run.cancel.decided':
    case 'run.kill.requested':
    case 'run.resolved.elsewhere':
    case 'run.completion.requested':
    case 'run.completion.retrying':
    case 'run.settled':
    case 'lane.session.remembered':
    case 'lane.session.forgotten':
    case 'board.run.submitted':
    case 'board.computer.added':
    case 'board.computer.connected':
    case 'board.computer.disconnected':
    case 'board.claim.requested':
    case 'board.heartbeat.lapsed':
    case 'board.cancel.requested':
    case 'board.run.started':
    case 'board.reply.received':
    case 'board.completion.received':
    case 'board.run.offered':
    case 'board.run.claimed':
    case 'board.run.running':
    case 'board.run.cancel.requested':
    case 'board.run.replied':
    case 'board.computer.registered':
    case 'board.computer.online':
    case 'board.computer.offline':
    case 'board.request.repeated':
    case 'board.request.rejected':
      return 'none';
    default: {
      const unplaced: never = type;
      throw new Error(`the audit summary does not know event type ${unplaced as string}`);
    }
  }
}

/** Looked up once a type: the fold asks this of every event in the log. */
const ROLES: Readonly<Record<string, Role>> = Object.fromEntries(Object.keys(eventDefinitions).map((t) => [t, roleOf(t as EventType)]));

export const auditSummaryProjection: Projection<AuditSummary> = {
  name: 'audit-summary',
  version: 1,
  initial: initialAuditSummary,
  evolve(state, event) {
    const role = ROLES[event.type];
    if (role === undefined || role === 'none') return state;
    if (event.at > state.lastAt) state.lastAt = event.at;
    if (role === 'board') evolveBoardOutcomes(state, event);
    else evolveQueueTimes(state, event);
    return state;
  },
};

function evolveBoardOutcomes(state: AuditSummary, event: DomainEvent): void {
  const board = state.board;
  switch (event.type) {
    case 'board.run.queued':
      board.submitted++;
      break;
    case 'board.run.deduplicated':
      board.deduplicated++;
      break;
    case 'board.run.finished':
      board.outcomes[event.data.state]++;
      break;
    case 'board.run.resolved':
      board.outcomes.resolved++;
      break;
    case 'board.run.cancelled':
      board.outcomes.cancelled++;
      break;
    case 'board.request.refused':
      board.refused[event.data.code] = (board.refused[event.data.code] ?? 0) + 1;
      break;
    default:
      break;
  }
}

function evolveQueueTimes(state: AuditSummary, event: DomainEvent): void {
  const computer = parseStream(event.stream).owner ?? '';
  const at = event.at;
  switch (event.type) {
    case 'run.queued': {
      const { runId, lane } = event.data;
      state.computers.queued++;
      laneOf(state, lane).runs++;
      state.waiting[`${computer}/${runId}`] = { lane, since: at, parkedUntil: null };
      break;
    }
    case 'run.claim.started': {
      const run = stopWaiting(state, computer, event.data.runId, at);
      if (run) run.since = null;
      break;
    }
    case 'run.parked': {
      const run = stopWaiting(state, computer, event.data.runId, at);
      state.computers.parks++;
      if (!run) break;
      laneOf(state, run.lane).parks++;
      run.since = at;
      run.parkedUntil = event.data.notBefore;
      break;
    }
    case 'run.unparked':
    case 'run.claim.retrying':
    case 'run.requeued': {
      const run = stopWaiting(state, computer, event.data.runId, at);
      if (event.type === 'run.claim.retrying') state.computers.claimsRetried++;
      if (!run) break;
      if (event.type === 'run.claim.retrying') laneOf(state, run.lane).claimRetries++;
      run.since = at;
      break;
    }
    case 'run.ended':
    case 'run.skipped':
    case 'run.withdrawn': {
      const outcome = event.type === 'run.ended' ? 'ended' : event.type === 'run.skipped' ? 'skipped' : 'withdrawn';
      stopWaiting(state, computer, event.data.runId, at);
      delete state.waiting[`${computer}/${event.data.runId}`];
      count(state.computers.outcomes[outcome], event.data.reason);
      const byComputer = (state.computers.byComputer[computer] ??= { ended: 0, skipped: 0, withdrawn: 0 });
      byComputer[outcome]++;
      break;
    }
    default:
      break;
  }
}

function laneOf(state: AuditSummary, lane: string): LaneTimes {
  return (state.lanes[lane] ??= { runs: 0, queuedMs: 0, parkedMs: 0, parks: 0, claimRetries: 0 });
}

/** Adds the wait that ends at `at` to its lane's times; returns the run, no longer waiting. */
function stopWaiting(state: AuditSummary, computer: string, runId: string, at: number): Waiting | null {
  const run = state.waiting[`${computer}/${runId}`];
  if (!run) return null;
  const { queuedMs, parkedMs } = waitOf(run, at);
  const lane = laneOf(state, run.lane);
  lane.queuedMs += queuedMs;
  lane.parkedMs += parkedMs;
  run.since = null;
  run.parkedUntil = null;
  return run;
}

/** A wait from `since` to `at`: parked until its `notBefore` (or until `at`, if that comes first), queued after. */
export function waitOf(run: Waiting, at: number): { queuedMs: number; parkedMs: number } {
  if (run.since === null || at <= run.since) return { queuedMs: 0, parkedMs: 0 };
  const parkedMs = run.parkedUntil === null ? 0 : Math.max(0, Math.min(at, run.parkedUntil) - run.since);
  return { queuedMs: at - run.since - parkedMs, parkedMs };
}

function count(tally: Tally, reason: string): void {
  tally.count++;
  const key = Object.hasOwn(tally.reasons, reason) || Object.keys(tally.reasons).length < MAX_REASONS ? reason : OTHER_REASONS;
  tally.reasons[key] = (tally.reasons[key] ?? 0) + 1;
}
