import { evolveSession } from '../actors/session/evolveSession.ts';
import { initialSessionClose, type SessionClose } from '../actors/session/sessionState.ts';
import { parseStream } from '../events/envelope.ts';
import { sessionEvents } from '../events/sessionEvents.ts';
import type { Projection } from './projection.ts';

/** By computer, then by session key (the id of its stream). */
export type CloseState = Record<string, Record<string, SessionClose>>;

/**
 * Per session (docs/rules.md#projections, "close"): close requested, claimed (lock, expiry), deferred and why,
 * the unread watch, confirmed, failed for good, attempts. What a round reads to find the open closes,
 * and what `status` can show.
 */
export const closeProjection: Projection<CloseState> = {
  name: 'close',
  version: 1,
  initial: () => ({}),
  evolve(state, event) {
    if (!Object.hasOwn(sessionEvents, event.type)) return state;
    const { owner, kind, id } = parseStream(event.stream);
    if (owner === null || kind !== 'session') return state;
    const sessions = (state[owner] ??= {});
    sessions[id] = evolveSession(sessions[id] ?? initialSessionClose(), event);
    return state;
  },
};

/** The keys of a computer's sessions whose close is open, oldest intent first. */
export function openCloses(state: CloseState, computer: string): string[] {
  return Object.entries(state[computer] ?? {})
    .filter(([, close]) => close.open)
    .sort(([, a], [, b]) => (a.intendedAt ?? 0) - (b.intendedAt ?? 0))
    .map(([key]) => key);
}
