import { parseStream } from '../../../../events/envelope.ts';
import type { EventStore } from '../../../../runtime/store/eventStore.ts';
import type { SessionListing } from './adoptionRound.ts';

/**
 * Sessions as the log lists them: the computer whose streams last named the session (its agent
 * announced it, a lane remembered it, its session actor recorded it). A session no computer named is
 * not listed. The daemon may list from its session drivers instead; this is what every board can read.
 */
export function logSessionListing(store: Pick<EventStore, 'readEntity'>): SessionListing {
  return {
    async find(sessionId) {
      let computer: string | null = null;
      for (const event of await store.readEntity(`session:${sessionId}`)) {
        const { owner } = parseStream(event.stream);
        if (owner !== null) computer = owner;
      }
      return computer;
    },
  };
}
