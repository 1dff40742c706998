import { LogUnwritableError } from '../logUnwritable.ts';
import { describeHolders, writeLockHolders } from './lockHolders.ts';

/**
 * How a SQLite log waits for a write lock another process holds (docs/rules.md#the-log). better-sqlite3
 * is synchronous: SQLite's busy handler sleeps on the main thread, so a long `busy_timeout` (it was
 * 10 s) froze the whole daemon, its HTTP answers and its timers, for as long as a `sqlite3` shell sat
 * in `BEGIN IMMEDIATE`. So each attempt waits at most BUSY_TIMEOUT_MS there (a commit of another
 * process takes a few milliseconds), and the store tries a batch again after a pause off the main
 * thread, for LOCK_PATIENCE_MS. Past that the lock is an outage like a full disk: the batch fails with
 * a LogUnwritableError (`locked`), its writers retry (untilRecorded), requests are answered 507.
 */
export const BUSY_TIMEOUT_MS = 50;
export const LOCK_PATIENCE_MS = 1_000;
/** While a log is opened (its schema checked and migrated, once): a wait there blocks nothing else yet. */
export const OPEN_BUSY_TIMEOUT_MS = 10_000;

const FIRST_PAUSE_MS = 20;
const LONGEST_PAUSE_MS = 250;

/** The pause before a batch's attempt `attempt + 1` at the lock: doubling from a blink to a quarter second. */
export function lockRetryWaitMs(attempt: number): number {
  return Math.min(FIRST_PAUSE_MS * 2 ** attempt, LONGEST_PAUSE_MS);
}

export function isLocked(error: unknown): error is LogUnwritableError {
  return error instanceof LogUnwritableError && error.reason === 'locked';
}

/** What the outage's line adds for a lock: who holds it, where that can be read, and what ends it. */
export function lockedLine(db: string): string {
  const holders = describeHolders(writeLockHolders(db));
  const who = holders
    ? `its write lock is held by ${holders}`
    : 'another process holds its write lock (a sqlite3 shell inside a transaction, a backup tool)';
  return `: ${who}; end that transaction (COMMIT or ROLLBACK) or stop that process`;
}
