/**
 * An append refused because the lease it must hold (AppendLease: a board's chores, docs/rules.md#postgresql-board) is not held
 * by its writer, or no longer: thrown, never retried as a conflict. No rival's append is to be read and
 * decided after, so deciding again changes nothing; the chore is left to the lease's holder.
 */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
}
