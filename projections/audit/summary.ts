import type { EventOf } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { exhausted } from '../../events/exhaustive.ts';
import { wordQueueReason } from '../../events/queueReasons.ts';
import { wordSessionReason } from '../../events/sessionReasons.ts';
import type { Projection } from '../projection.ts';
import { type CountedIn, countsIn, ROLES } from './summaryRoles.ts';

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
 * on the computers, time queued and parked per lane, claims retried; session closes deferred (and why)
 * and failed, adoptions, hooks and notices delivered.
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
  /** Session closes (docs/rules.md#sessions-hooks-notifications): intended, confirmed, deferred (each deferral, by reason), failed for good (by reason). */
  sessions: { intended: number; closed: number; closesDeferred: Tally; closesFailed: Tally };
  adoptions: { requested: number; adopted: number; failed: number; released: number };
  /** Hook runs: delivered (exited well), failed, cut by a crash; by hook name. */
  hooks: { delivered: number; failed: number; interrupted: number; byHook: Record<string, { delivered: number; failed: number }> };
  /** Notices filed into inboxes, handed to agents; inboxes that waited on an unreadable liveness, or withheld. */
  notices: { filed: number; handed: number; waiting: number; withheld: number };
}

const tally = (): Tally => ({ count: 0, reasons: {} });

export function initialAuditSummary(): AuditSummary {
  return {
    lastAt: 0,
    board: { submitted: 0, deduplicated: 0, outcomes: { succeeded: 0, failed: 0, cancelled: 0, resolved: 0 }, refused: {} },
    computers: { queued: 0, outcomes: { ended: tally(), skipped: tally(), withdrawn: tally() }, byComputer: {}, claimsRetried: 0, parks: 0 },
    lanes: {},
    waiting: {},
    sessions: { intended: 0, closed: 0, closesDeferred: tally(), closesFailed: tally() },
    adoptions: { requested: 0, adopted: 0, failed: 0, released: 0 },
    hooks: { delivered: 0, failed: 0, interrupted: 0, byHook: {} },
    notices: { filed: 0, handed: 0, waiting: 0, withheld: 0 },
  };
}

export const auditSummaryProjection: Projection<AuditSummary> = {
  name: 'audit-summary',
  version: 1,
  initial: initialAuditSummary,
  evolve(state, event) {
    const role = ROLES[event.type];
    if (role === undefined || role === 'none') return state;
    if (event.at > state.lastAt) state.lastAt = event.at;
    if (countsIn(event, 'board')) evolveBoardOutcomes(state, event);
    else if (countsIn(event, 'queue')) evolveQueueTimes(state, event);
    else if (countsIn(event, 'sessions')) evolveSessions(state, event);
    return state;
  },
};

function evolveSessions(state: AuditSummary, event: EventOf<CountedIn<'sessions'>>): void {
  const { sessions, adoptions, hooks, notices } = state;
  switch (event.type) {
    case 'session.close.intended':
      sessions.intended++;
      break;
    case 'session.closed':
      sessions.closed++;
      break;
    case 'session.close.deferred':
      count(sessions.closesDeferred, wordSessionReason(event.data.reason));
      break;
    case 'session.close.incident':
      count(sessions.closesFailed, wordSessionReason(event.data.reason));
      break;
    case 'adoption.requested':
      adoptions.requested++;
      break;
    case 'adoption.released':
      adoptions.released++;
      break;
    case 'adoption.adopted':
      adoptions.adopted++;
      break;
    case 'adoption.failed':
      adoptions.failed++;
      break;
    case 'hook.exited': {
      const byHook = (hooks.byHook[event.data.hook] ??= { delivered: 0, failed: 0 });
      if (event.data.ok) {
        hooks.delivered++;
        byHook.delivered++;
      } else {
        hooks.failed++;
        byHook.failed++;
      }
      break;
    }
    case 'hook.interrupted':
      hooks.interrupted++;
      break;
    case 'notice.filed':
      notices.filed++;
      break;
    case 'notices.handed':
      notices.handed++;
      break;
    case 'inbox.waiting':
      notices.waiting++;
      break;
    case 'inbox.withheld':
      notices.withheld++;
      break;
    default:
      exhausted(event, undefined);
  }
}

function evolveBoardOutcomes(state: AuditSummary, event: EventOf<CountedIn<'board'>>): void {
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
      exhausted(event, undefined);
  }
}

function evolveQueueTimes(state: AuditSummary, event: EventOf<CountedIn<'queue'>>): void {
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
      count(state.computers.outcomes[outcome], wordQueueReason(event.data.reason));
      const byComputer = (state.computers.byComputer[computer] ??= { ended: 0, skipped: 0, withdrawn: 0 });
      byComputer[outcome]++;
      break;
    }
    default:
      exhausted(event, undefined);
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
