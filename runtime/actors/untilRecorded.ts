import type { NewDomainEvent } from '../../events/catalog.ts';
import { StaleVersionError } from '../store/eventStore.ts';
import { LogUnwritableError } from '../store/logUnwritable.ts';
import { fullJitterMs } from './backoff.ts';
import type { Clock } from './clock.ts';

/** The waits between attempts: from a blink to a few seconds, so a freed disk is used within 5 s. */
const FIRST_WAIT_MS = 100;
const LONGEST_WAIT_MS = 5_000;

/**
 * Runs `attempt` (the recording of a fact of the world: an agent's exit, a claim answer, a frame, a
 * timer, an effect's record) until the log takes it. Two refusals are waited out, since neither wrote
 * anything, so trying again cannot record the fact twice:
 * - a LogUnwritableError comes from a transaction the store rolled back (an I/O error at the very end
 *   of a commit can leave it in the log after all: each attempt is decided again on the state folded
 *   from the log, where the fact already stands, and deciders take a repeated fact as a repeat). The
 *   wait doubles up to a few seconds.
 * - a StaleVersionError is a conflict still standing after CONFLICT_RETRIES decisions in a row: other
 *   writers (another board on the same PostgreSQL log, docs/rules.md#postgresql-board) kept appending to its streams. The wait
 *   is drawn below the same doubling cap (full jitter, `random` in [0, 1)), so the rivals that refused
 *   each other spread out instead of meeting again on the next tick.
 * Both waits are on `clock`. Any other error is not the machine's and is thrown. (The store itself says
 * when an outage begins and ends, once each, however many writers wait it out.)
 */
/** The wait before attempt `attempt + 1` at a fact the log could not take yet: doubling from a blink to a few seconds. */
export function recordWaitMs(attempt: number): number {
  return Math.min(FIRST_WAIT_MS * 2 ** attempt, LONGEST_WAIT_MS);
}

export async function untilRecorded<T>(clock: Pick<Clock, 'after'>, attempt: () => Promise<T>, random: () => number = Math.random): Promise<T> {
  for (let unwritable = 0, contended = 0; ; ) {
    let wait: number;
    try {
      return await attempt();
    } catch (error) {
      if (error instanceof LogUnwritableError) wait = recordWaitMs(unwritable++);
      else if (error instanceof StaleVersionError) wait = fullJitterMs(contended++, random(), FIRST_WAIT_MS, LONGEST_WAIT_MS);
      else throw error;
    }
    await new Promise<void>((resolve) => clock.after(wait, resolve));
  }
}

export interface InputOptions {
  /**
   * Refuse at once when the log cannot take the input (the LogUnwritableError) or its conflicts outlast
   * CONFLICT_RETRIES (the StaleVersionError): for an asker that retries on its own (an HTTP client, told
   * 507 or 503) or that must not wait for a freed disk (`runledger run`).
   */
  readonly failFast?: boolean;
}

/** An input's recording, waited out with `untilRecorded` unless the asker wants `failFast`. */
export function recordedUnlessFailFast<T>(
  clock: Pick<Clock, 'after'>,
  options: InputOptions,
  attempt: () => Promise<T>,
  random?: () => number,
): Promise<T> {
  return options.failFast ? attempt() : untilRecorded(clock, attempt, random);
}

/** Where the failures of inputs sent without waiting are told (the daemon's log). */
export type FailureLog = (line: string) => void;

export const stderrLog: FailureLog = (line) => console.error(line);

/**
 * The catch of an input sent without waiting for its commit (a timer, an agent's exit): an input that
 * could not be recorded after all (not the log being full nor a stream others kept writing: those are
 * waited out) is one line naming the input and the error, never swallowed.
 */
export function unrecorded(log: FailureLog, input: NewDomainEvent): (error: unknown) => void {
  const runId = (input.data as { runId?: unknown }).runId;
  const what = `${input.type}${typeof runId === 'string' ? ` of run ${runId}` : ''} (${input.stream})`;
  return (error) => log(`${what} could not be recorded: ${error instanceof Error ? error.message : String(error)}`);
}
