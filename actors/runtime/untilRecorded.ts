import type { NewDomainEvent } from '../../events/catalog.ts';
import { LogUnwritableError } from '../../events/store/logUnwritable.ts';
import type { Clock } from './clock.ts';

/** The waits between attempts: from a blink to a few seconds, so a freed disk is used within 5 s. */
const FIRST_WAIT_MS = 100;
const LONGEST_WAIT_MS = 5_000;

/**
 * Runs `attempt` (the recording of a fact of the world: an agent's exit, a claim answer, a frame, a
 * timer, an effect's record) until the log takes it. A LogUnwritableError comes from a transaction
 * SQLite rolled back, so trying again does not record it twice (an I/O error at the very end of a
 * commit can leave it in the log after all: each attempt is decided again on the state folded from the
 * log, where the fact already stands, and deciders take a repeated fact as a repeat). The wait doubles
 * up to a few seconds, on `clock`.
 * Any other error is not the machine's and is thrown. (The store itself says when an outage begins and
 * ends, once each, however many writers wait it out.)
 */
export async function untilRecorded<T>(clock: Pick<Clock, 'after'>, attempt: () => Promise<T>): Promise<T> {
  for (let wait = FIRST_WAIT_MS; ; wait = Math.min(wait * 2, LONGEST_WAIT_MS)) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof LogUnwritableError)) throw error;
    }
    await new Promise<void>((resolve) => clock.after(wait, resolve));
  }
}

export interface InputOptions {
  /**
   * Refuse at once with the LogUnwritableError when the log cannot take the input: for an asker that
   * retries on its own (an HTTP client) or that must not wait for a freed disk (`runledger run`).
   */
  readonly failFast?: boolean;
}

/** An input's recording, waited out with `untilRecorded` unless the asker wants `failFast`. */
export function recordedUnlessFailFast<T>(clock: Pick<Clock, 'after'>, options: InputOptions, attempt: () => Promise<T>): Promise<T> {
  return options.failFast ? attempt() : untilRecorded(clock, attempt);
}

/** Where the failures of inputs sent without waiting are told (the daemon's log). */
export type FailureLog = (line: string) => void;

export const stderrLog: FailureLog = (line) => console.error(line);

/**
 * The catch of an input sent without waiting for its commit (a timer, an agent's exit): an input that
 * could not be recorded after all (not the log being full: that is waited out) is one line naming the
 * input and the error, never swallowed.
 */
export function unrecorded(log: FailureLog, input: NewDomainEvent): (error: unknown) => void {
  const runId = (input.data as { runId?: unknown }).runId;
  const what = `${input.type}${typeof runId === 'string' ? ` of run ${runId}` : ''} (${input.stream})`;
  return (error) => log(`${what} could not be recorded: ${error instanceof Error ? error.message : String(error)}`);
}
