import type { UnreadWatch } from '../../events/sessionEvents.ts';

/**
 * The watch on a session that publishes no turn (docs/rules.md#sessions-hooks-notifications). It goes on from the one held while
 * the record's last write (`mark`) is the same and the readings come no more than `gapMs` apart;
 * otherwise it starts again at this reading. Rounds further apart than `gap` are no watch at all: a
 * daemon that slept through an hour has watched nothing, whatever the clock says.
 */
export function unreadWatch(held: UnreadWatch | null, mark: number, gapMs: number, at: number): UnreadWatch {
  const kept = held !== null && held.mark === mark && held.since <= at && at - held.seen <= gapMs;
  return { since: kept ? held.since : at, mark, seen: at };
}

/** How long a watch has seen nothing written. */
export const watchedMs = (watch: UnreadWatch): number => watch.seen - watch.since;
