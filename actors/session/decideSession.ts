import type { EventData, EventType, NewEventOf } from '../../events/catalog.ts';
import type { NewEvent } from '../../events/envelope.ts';
import { exhausted } from '../../events/exhaustive.ts';
import type { SessionReason, SessionStop } from '../../events/sessionReasons.ts';
import { claimHolds, holdsClaim, ownClaimReusable } from './claims.ts';
import type { SessionClose } from './sessionState.ts';
import { unreadWatch, watchedMs } from './unreadWatch.ts';

/** What a session's close is told: the end of a run in it, a round's turn, a reading, a kill's answer. */
export const SESSION_INPUTS = [
  'session.run.ended',
  'session.close.due',
  'session.read',
  'session.kill.answered',
] as const satisfies readonly EventType[];
export type SessionInput = NewEventOf<(typeof SESSION_INPUTS)[number]>;

type DecisionType =
  | 'session.close.intended'
  | 'session.close.claimed'
  | 'session.close.deferred'
  | 'session.kill.requested'
  | 'session.closed'
  | 'session.close.incident';
/** What the close decides, in the session's stream. */
export type SessionDecision = NewEventOf<DecisionType>;

type Decision = SessionDecision;
/** A decision of type `T` in the input's stream, at its time. */
type On = <T extends DecisionType>(type: T, data: EventData<T>) => NewEvent<T, EventData<T>>;

/** The turns a reading finds in progress: a close never cuts them. */
const IN_TURN = new Set(['working', 'needs_input']);

/** A session's close (docs/rules.md#sessions-hooks-notifications, "Session close"). Pure: time is the input's `at`. */
export function decideSession(state: SessionClose, input: SessionInput): Decision[] {
  const at = input.at;
  const on: On = (type, data) => ({ stream: input.stream, type, data, at });

  switch (input.type) {
    case 'session.run.ended': {
      const { sessionId, runId, lane, bound } = input.data;
      return [on('session.close.intended', { sessionId, runId, reason: { code: state.open ? 'stands' : 'intended', run: runId, lane, bound } })];
    }
    case 'session.close.due': {
      const { sessionId, lock, ttlMs } = input.data;
      const earlier = state.claim;
      const unanswered = state.killing ? { unanswered: state.killing.attempt } : {};
      const reason: SessionReason =
        earlier === null
          ? { code: 'claimed', ...unanswered }
          : earlier.lock === lock
            ? { code: 'renewed', ...unanswered }
            : { code: 'taken.over', from: earlier.lock, expired: earlier.expires <= at, ...unanswered };
      return [on('session.close.claimed', { sessionId, lock, expires: at + ttlMs, reason })];
    }
    case 'session.read':
      return answerReading(state, input.data, at, on);
    case 'session.kill.answered': {
      const { sessionId, attempt, ok, detail } = input.data;
      if (ok) return [on('session.closed', { sessionId, attempt, reason: { code: 'stopped', detail } })];
      return [on('session.close.incident', { sessionId, attempt, reason: { code: 'unstoppable', detail } })];
    }
    default:
      return exhausted(input, []);
  }
}

/**
 * What the reading taken just before the kill calls for. Idle, stopped, gone or no agent: close. A
 * turn in progress: wait, for as long as it reads so. A turn the agent does not publish: the unread
 * watch decides, except for a launch never bound to a session past its launch window.
 */
function answerReading(state: SessionClose, reading: EventData<'session.read'>, at: number, on: On): Decision[] {
  const { sessionId, activity, failure, settings } = reading;
  const attempt = state.attempts + 1;
  const defer = (reason: SessionReason, unread = state.unread) => [on('session.close.deferred', { sessionId, attempt, reason, unread })];
  if (activity === null) return defer({ code: 'unreadable', failure });
  const stop = (why: SessionStop): Decision[] =>
    activity.target === null
      ? [on('session.closed', { sessionId, attempt, reason: { ...why, nothingLeft: true } })]
      : [on('session.kill.requested', { sessionId, attempt, target: activity.target, reason: why })];
  const seen = activity.seen ? { seen: activity.seen } : {};

  if (activity.presence === 'gone') return [on('session.closed', { sessionId, attempt, reason: { code: 'gone', ...seen } })];
  if (activity.presence === 'stopped') return stop({ code: 'no.agent', ...seen });
  if (IN_TURN.has(activity.turn)) return defer({ code: 'in.turn', turn: activity.turn, ...seen }, null);
  if (activity.turn === 'idle') return stop({ code: 'idle', ...seen });

  // No turn published. A launch that never became a session holds no turn to cut.
  if (!state.bound && state.launchedAt !== null && at - state.launchedAt >= settings.launchWindowMs) {
    return stop({ code: 'unbound', windowMs: settings.launchWindowMs, ...seen });
  }
  if (activity.mark === null) return defer({ code: 'no.write', ...seen });
  const watch = unreadWatch(state.unread, activity.mark, settings.gapMs, at);
  if (watchedMs(watch) >= settings.quietMs) return stop({ code: 'quiet', watchedMs: watchedMs(watch), quietMs: settings.quietMs, ...seen });
  const restarted =
    watch.since === at && state.unread !== null ? { restarted: state.unread.mark !== activity.mark ? ('written' as const) : ('stale' as const) } : {};
  return defer({ code: 'watching', quietMs: settings.quietMs, watchedMs: watchedMs(watch), ...restarted, ...seen }, watch);
}

/**
 * Inputs that would change nothing, and are therefore neither recorded nor decided: a round that
 * finds the close claimed by a live process, or held by its own claim with time to spare (it then
 * reads at once); a reading by a process that does not hold the claim; an answer to a kill that is no
 * longer the one awaited (a close confirmed meanwhile is never undone by a late failure).
 */
export function ignoresSession(state: SessionClose, input: SessionInput): boolean {
  switch (input.type) {
    case 'session.run.ended':
      return input.data.runId === state.runId;
    case 'session.close.due': {
      if (!state.open) return true;
      const { lock, holder } = input.data;
      if (claimHolds(state.claim, lock, holder, input.at) || ownClaimReusable(state.claim, lock, input.at)) return true;
      // This process's own kill in flight is left to its outbox until its claim runs out.
      return state.killing !== null && holdsClaim(state.claim, lock, input.at);
    }
    case 'session.read':
      return !state.open || state.killing !== null || state.claim === null || state.claim.lock !== input.data.lock || state.claim.expires <= input.at;
    case 'session.kill.answered':
      return !state.open || state.killing?.attempt !== input.data.attempt;
    default:
      return exhausted(input, true);
  }
}
