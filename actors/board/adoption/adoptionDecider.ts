import type { DomainEvent, EventData, EventType, NewEventOf, TypesOutside } from '../../../events/catalog.ts';
import { type NewEvent, parseStream } from '../../../events/envelope.ts';
import { exhausted, ignoreRest } from '../../../events/exhaustive.ts';
import { decider } from '../../decider.ts';
import { claimHolds } from '../../session/claims.ts';
import { ADOPTION_LISTING_WINDOW_MS, type AdoptionState, initialAdoptionState } from './adoptionState.ts';

/** What a lane's adoption is told: requests and releases, and a round's readings and binds. */
const INPUTS = ['adoption.requested', 'adoption.released', 'adoption.listing.read', 'adoption.bind.ended'] as const satisfies readonly EventType[];
export type AdoptionInput = NewEventOf<(typeof INPUTS)[number]>;

type DecisionType = 'adoption.claimed' | 'adoption.waiting' | 'adoption.adopted' | 'adoption.failed';
export type AdoptionDecision = NewEventOf<DecisionType>;
type Decision = AdoptionDecision;

/**
 * Adoption (docs/rules.md#sessions-hooks-notifications): a request to bind a live session to a lane is open while it is the lane's
 * latest answer, or while the latest is a claim of it that no longer holds (its process died, or it
 * expired). A round reads where the session is listed and, from that reading, claims the request
 * before it writes anything outside the board; only the claiming round binds, and the bind's outcome is
 * recorded only while that claim is still the lane's latest answer. A session not listed waits for
 * the listing window from the request, then the request fails with the reason.
 */
export const adoptionDecider = decider<AdoptionState, AdoptionInput, AdoptionDecision>({
  name: 'adoption',
  inputs: INPUTS,
  scopeOf(event) {
    if (!event.type.startsWith('adoption.')) return null;
    const { owner, kind, id } = parseStream(event.stream);
    return owner === null && kind === 'lane' ? id : null;
  },
  initialState: initialAdoptionState,
  decide: decideAdoption,
  // A reading that changes nothing (a claim still held, a wait already said) is not recorded. The end of
  // a bind always is: something was written outside the board, answered or not.
  ignores: (state, input) => input.type === 'adoption.listing.read' && decideAdoption(state, input).length === 0,
  evolve: evolveAdoption,
});

export function decideAdoption(state: AdoptionState, input: AdoptionInput): Decision[] {
  const { at } = input;
  const on = <T extends DecisionType>(type: T, data: EventData<T>): NewEvent<T, EventData<T>> => ({ stream: input.stream, type, data, at });
  switch (input.type) {
    case 'adoption.listing.read': {
      const reading = input.data;
      const { request } = state;
      if (request === null || reading.request !== request.n || !isOpenTo(state, reading, at)) return [];
      const { lane } = state;
      const { sessionId } = request;
      if (reading.listedOn !== null) {
        return [
          on('adoption.claimed', {
            lane,
            request: request.n,
            sessionId,
            computerId: reading.listedOn,
            lock: reading.lock,
            expires: at + reading.ttlMs,
            reason: {
              code: 'claimed',
              lock: reading.lock,
              session: sessionId,
              listedOn: reading.listedOn,
              ...(state.latest === 'claimed' ? { lapsed: state.claim!.lock } : {}),
            },
          }),
        ];
      }
      const until = request.at + ADOPTION_LISTING_WINDOW_MS;
      if (at < until) {
        if (state.waitSaid) return [];
        return [
          on('adoption.waiting', {
            lane,
            request: request.n,
            sessionId,
            until,
            reason: { code: 'not.listed', session: sessionId, error: reading.error, windowS: ADOPTION_LISTING_WINDOW_MS / 1000 },
          }),
        ];
      }
      const afterS = Math.round((at - request.at) / 1000);
      return [
        on('adoption.failed', {
          lane,
          request: request.n,
          sessionId,
          reason: { code: 'window.closed', session: sessionId, error: reading.error, afterS },
        }),
      ];
    }
    case 'adoption.bind.ended': {
      const bind = input.data;
      const own = state.latest === 'claimed' && state.claim?.lock === bind.lock && state.request?.n === bind.request;
      // A claim superseded meanwhile (released, asked again, claimed by another after it lapsed) is not answered here.
      if (!own) return [];
      const { lane } = state;
      if (bind.ok) {
        return [
          on('adoption.adopted', {
            lane,
            request: bind.request,
            sessionId: bind.sessionId,
            computerId: bind.computerId,
            reason: { code: 'adopted', lane, session: bind.sessionId, computer: bind.computerId },
          }),
        ];
      }
      return [
        on('adoption.failed', {
          lane,
          request: bind.request,
          sessionId: bind.sessionId,
          reason: { code: 'bind.failed', error: bind.error },
        }),
      ];
    }
    case 'adoption.requested':
    case 'adoption.released':
      // A request or a release is the answer itself: folded, it opens or closes the lane's request.
      return [];
    default:
      return exhausted(input, []);
  }
}

/** Whether the latest request is open to the round that read `reading`: not answered, and not claimed by a claim that holds. */
function isOpenTo(state: AdoptionState, reading: EventData<'adoption.listing.read'>, at: number): boolean {
  if (state.latest === 'requested') return true;
  if (state.latest !== 'claimed') return false;
  return !claimHolds(state.claim, reading.lock, reading.claim, at);
}

export function evolveAdoption(state: AdoptionState, event: DomainEvent): AdoptionState {
  switch (event.type) {
    case 'adoption.requested':
      state.requests += 1;
      state.request = { n: state.requests, sessionId: event.data.sessionId, at: event.at };
      state.latest = 'requested';
      state.claim = null;
      state.waitSaid = false;
      break;
    case 'adoption.released':
      state.latest = 'released';
      state.claim = null;
      break;
    case 'adoption.claimed':
      state.latest = 'claimed';
      state.claim = { lock: event.data.lock, expires: event.data.expires, computerId: event.data.computerId };
      break;
    case 'adoption.waiting':
      state.waitSaid = true;
      break;
    case 'adoption.adopted':
      state.latest = 'adopted';
      state.claim = null;
      state.adopted = { sessionId: event.data.sessionId, computerId: event.data.computerId };
      break;
    case 'adoption.failed':
      state.latest = 'failed';
      state.claim = null;
      break;
    case 'adoption.listing.read':
    case 'adoption.bind.ended':
      // Readings: what they found is in the decisions taken from them.
      break;
    default:
      ignoreRest<TypesOutside<'adoption'>>(event);
      break;
  }
  return state;
}

/** Whether the lane has a request a round may act on (a claim that may still hold is checked with its reading). */
export function hasOpenRequest(state: AdoptionState): boolean {
  return state.request !== null && (state.latest === 'requested' || state.latest === 'claimed');
}
