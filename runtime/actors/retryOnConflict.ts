import { StaleVersionError } from '../store/eventStore.ts';
import { LeaseLostError } from '../store/leaseLost.ts';

/**
 * How many times an input refused for a stale version is decided again, by every actor and command
 * that appends. A conflict means another writer committed to the stream between this one's read and
 * its append; the writers of one stream are few (the daemon or the board, a one-shot `runledger tick`,
 * `adopt` or `subscribe`, a second round), and each retry first reads what they wrote, so one retry
 * per rival is enough and five leave room for several at once. Five in a row is no longer a race one
 * more read resolves but a stream written faster than this writer decides: the asker is then told (a
 * 503, a skipped round, "kept changing; try again") instead of being kept spinning, and a fact of the
 * world (a connection, a timer, an exit) waits a jittered while and goes again (untilRecorded). Five was already
 * the session closer's and the adoption round's count; the others had drifted to 0, 3, 4 and 9.
 */
export const CONFLICT_RETRIES = 5;

/**
 * The one retry loop for a stale-version conflict. `attempt` must start from the log: fold what was
 * appended since (or rehydrate), decide again and append, answering the conflict instead of throwing
 * it. An append refused only because an earlier one of its chain broke is retried without counting:
 * no other writer is involved, and the next attempt starts a chain of its own. One refused because its
 * lease is not held is no conflict: it is thrown as a LeaseLostError, which no caller waits out.
 */
export async function retryOnConflict<T>(
  attempt: () => Promise<T | StaleVersionError>,
  /** What is thrown once the retries are spent (a message for a person); the last conflict by default. */
  exhausted: (conflict: StaleVersionError) => Error = (conflict) => conflict,
): Promise<T> {
  for (let conflicts = 0; ; ) {
    const outcome = await attempt();
    if (!(outcome instanceof StaleVersionError)) return outcome;
    if (outcome.leaseLost) throw new LeaseLostError(outcome.message);
    if (!outcome.brokenChain && conflicts++ >= CONFLICT_RETRIES) throw exhausted(outcome);
  }
}
