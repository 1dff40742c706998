import type { Clock } from '../events/clock.ts';
import type { EventStore } from '../events/store/eventStore.ts';
import { LogUnwritableError } from '../events/store/logUnwritable.ts';

/** The waits between attempts: from a blink to a few seconds, so a freed disk is used within 5 s. */
const FIRST_WAIT_MS = 100;
const LONGEST_WAIT_MS = 5_000;

/** The logs in an outage now: each is named once when its writes start failing and once when one goes through. */
const outages = new WeakSet<EventStore>();

/**
 * Runs `attempt` (the recording of a fact of the world: an agent's exit, a claim answer, a frame, a
 * timer, an effect's record) until the log takes it. A LogUnwritableError means nothing of it was
 * written, so trying again cannot record it twice; the wait doubles up to a few seconds, on `clock`.
 * Any other error is not the machine's and is thrown. `what` says what waits, in the outage's notice.
 */
export async function untilRecorded<T>(store: EventStore, clock: Pick<Clock, 'after'>, what: string, attempt: () => Promise<T>): Promise<T> {
  let waited = false;
  for (let wait = FIRST_WAIT_MS; ; wait = Math.min(wait * 2, LONGEST_WAIT_MS)) {
    try {
      const result = await attempt();
      if (waited && outages.delete(store)) console.error(`the log can be written again: what waited to be recorded (${what}, ...) goes on`);
      return result;
    } catch (error) {
      if (!(error instanceof LogUnwritableError)) throw error;
      if (!outages.has(store)) {
        outages.add(store);
        console.error(`${error.message}; ${what} and whatever else must be recorded is retried until the log takes it`);
      }
    }
    waited = true;
    await new Promise<void>((resolve) => clock.after(wait, resolve));
  }
}
