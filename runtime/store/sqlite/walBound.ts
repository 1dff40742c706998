import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { describeHolders, readerHolders } from './lockHolders.ts';

export interface WalPolicy {
  /** The WAL's size past which the store cuts it back (64 MiB by default). */
  readonly limitBytes?: number;
  /** How often it looks at the WAL's size (every 10 s by default). */
  readonly lookEveryMs?: number;
}

const LIMIT_BYTES = 64 * 1024 * 1024;
/** Real time: the file grows with the appends of every process on it (docs/architecture.md#real-time-waits). */
const LOOK_EVERY_MS = 10_000;

/**
 * Keeps a WAL-mode log's WAL bounded (docs/rules.md#the-log). SQLite reuses its WAL from the start
 * once a checkpoint has copied every frame and no reader still needs one; a reader that keeps a read
 * transaction open (a `sqlite3` shell left in `BEGIN`, a backup) stops that, so the WAL grows with every
 * commit, and SQLite never shrinks the file afterwards. So: `journal_size_limit` makes SQLite cut the
 * WAL back to the bound at each reset; every `lookEveryMs` a WAL over the bound gets a TRUNCATE
 * checkpoint (its busy wait is the connection's short one: a reader in the way costs 50 ms, and the
 * next look tries again); and while a reader stops it, the store says so, naming the reader where
 * /proc/locks tells, again each time the WAL doubled, and once more when it is back under the bound.
 */
export class WalBound {
  private readonly limit: number;
  private readonly timer: NodeJS.Timeout;
  /** The WAL's size when the store last warned (0: no warning stands). */
  private warnedAt = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly report: (line: string) => void,
    policy: WalPolicy = {},
  ) {
    this.limit = policy.limitBytes ?? LIMIT_BYTES;
    db.pragma(`journal_size_limit = ${this.limit}`);
    this.timer = setInterval(() => this.look(), policy.lookEveryMs ?? LOOK_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private look(): void {
    if (!this.db.open) return;
    const size = this.walSize();
    if (size > this.limit) {
      try {
        this.db.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // The log cannot be written now (a lock, a full disk): its outage is told by the appends; the next look tries again.
      }
    }
    const after = this.walSize();
    if (after <= this.limit) {
      if (this.warnedAt > 0) this.report(`the WAL of the log ${this.path} is back to ${megabytes(after)}`);
      this.warnedAt = 0;
      return;
    }
    if (this.warnedAt > 0 && after < 2 * this.warnedAt) return;
    this.warnedAt = after;
    const readers = describeHolders(readerHolders(this.path));
    const who = readers ? `${readers} keeps` : 'another process (a sqlite3 shell, a backup) keeps';
    this.report(
      `the WAL of the log ${this.path} has grown to ${megabytes(after)} and cannot be cut back: ${who} a read transaction open on the log, ` +
        'so no checkpoint can pass it; it is cut back once that transaction ends (COMMIT or ROLLBACK it, or stop that process)',
    );
  }

  private walSize(): number {
    return statSync(`${this.path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  }
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
