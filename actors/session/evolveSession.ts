import type { DomainEvent, TypesOutside } from '../../events/catalog.ts';
import { ignoreRest } from '../../events/exhaustive.ts';
import type { SessionClose } from './sessionState.ts';

/** Folds one event of a session's stream into its close (in place, see Projection). */
export function evolveSession(state: SessionClose, event: DomainEvent): SessionClose {
  switch (event.type) {
    case 'session.run.ended':
      // What the run's end told is kept for the close it opens (or refreshes).
      state.sessionId = event.data.sessionId;
      state.lane = event.data.lane;
      state.bound = event.data.bound;
      state.launchedAt = event.data.launchedAt;
      state.pid = event.data.pid;
      break;
    case 'session.close.intended':
      if (!state.open) {
        // A new close: nothing of an earlier one carries over.
        state.open = true;
        state.claim = null;
        state.attempts = 0;
        state.deferred = null;
        state.unread = null;
        state.killing = null;
        state.confirmedAt = null;
        state.failedAt = null;
        state.failure = null;
      }
      state.sessionId = event.data.sessionId;
      state.runId = event.data.runId;
      state.intendedAt = event.at;
      break;
    case 'session.close.claimed':
      state.claim = { lock: event.data.lock, expires: event.data.expires };
      // An unanswered kill of an earlier attempt is that attempt's; this one reads afresh.
      state.killing = null;
      break;
    case 'session.close.deferred':
      state.attempts = event.data.attempt;
      state.deferred = event.data.reason;
      state.unread = event.data.unread;
      break;
    case 'session.kill.requested':
      state.attempts = event.data.attempt;
      state.killing = { attempt: event.data.attempt, target: event.data.target, at: event.at };
      state.deferred = null;
      break;
    case 'session.closed':
      state.attempts = event.data.attempt;
      state.open = false;
      state.confirmedAt = event.at;
      state.claim = null;
      state.killing = null;
      state.deferred = null;
      state.unread = null;
      break;
    case 'session.close.incident':
      state.attempts = event.data.attempt;
      state.open = false;
      state.failedAt = event.at;
      state.failure = event.data.reason;
      state.claim = null;
      state.killing = null;
      break;
    // Inputs whose effect is in their decisions.
    case 'session.close.due':
    case 'session.read':
    case 'session.kill.answered':
      break;
    default:
      ignoreRest<TypesOutside<'session'>>(event);
      break;
  }
  return state;
}
