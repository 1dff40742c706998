import { StaleVersionError } from '../../events/store/eventStore.ts';

/**
 * How many times an input refused for a stale version is decided again, by every actor. A conflict
 * means another writer committed to the stream between this actor's read and its append; the writers
 * of one stream are few (the daemon or the board, a one-shot `runledger tick` or `adopt`, a second
 * round), and each retry first reads what they wrote. Five in a row is no longer a race one more read
 * resolves but a stream written faster than this actor decides: the asker is then told (a 409, a
 * skipped round, a line in the log) instead of being kept spinning. Five, the larger of the two
 * counts there were (the board's and the computer's queue had three, the session closer five): a
 * retry costs one read of the log, far less than a refusal the asker must handle.
 */
export const CONFLICT_RETRIES = 5;

/**
 * The one retry loop for a stale-version conflict. `attempt` must start from the log: fold what was
 * appended since (or rehydrate), decide again and append, answering the conflict instead of throwing
 * it. An append refused only because an earlier one of its chain broke is retried without counting:
 * no other writer is involved, and the next attempt starts a chain of its own.
 */
export async function retryOnConflict<T>(attempt: () => Promise<T | StaleVersionError>): Promise<T> {
  for (let conflicts = 0; ; ) {
    const outcome = await attempt();
    if (!(outcome instanceof StaleVersionError)) return outcome;
    if (!outcome.brokenChain && conflicts++ >= CONFLICT_RETRIES) throw outcome;
  }
}
