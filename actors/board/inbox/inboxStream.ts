import type { EventStore } from '../../../runtime/store/eventStore.ts';
import { inboxDecider } from './inboxDecider.ts';
import type { InboxState } from './inboxState.ts';

/**
 * A session's inbox: a stream of its own on the board (no owner prefix), so that filing contends only
 * with the filings and hand-overs of that session, never with its close on its computer.
 */
export function inboxStream(sessionId: string): string {
  return `inbox:${sessionId}`;
}

/** The inbox as its own stream has it now, and the version to append at. */
export async function readInbox(
  store: Pick<EventStore, 'readStream'>,
  sessionId: string,
): Promise<{ state: InboxState; versions: Map<string, number> }> {
  const stream = inboxStream(sessionId);
  let state = inboxDecider.initialState(sessionId);
  let version = 0;
  for (const event of await store.readStream(stream)) {
    state = inboxDecider.evolve(state, event);
    version = event.version;
  }
  return { state, versions: new Map([[stream, version]]) };
}
