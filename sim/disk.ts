import Database from 'better-sqlite3';
import type { AppendRequest, OpenedLog } from '../runtime/store/eventStore.ts';
import { openSqliteStore, SqliteEventStore } from '../runtime/store/sqlite/sqliteEventStore.ts';

/**
 * One machine's disk: an in-memory SQLite log that outlives the machine's process lives. A crash keeps
 * what was committed (its image) and nothing else; the next life opens a copy of that image, so the
 * dead life, if any of its code still runs, writes to a log nobody reads again. Appends can be made to
 * fail for a while (a full disk), through the store's own fault seam, so they roll back as a real one.
 */
export class SimDisk {
  private db: Database.Database | null = null;
  /** While true, every commit fails with SQLITE_FULL. */
  full = false;
  /** Commits refused because the disk was full. */
  refusals = 0;
  /**
   * Write transactions begun on the disk, by any life (a dead one's too): while it stays put, no row was
   * added, and the invariants need not look for new ones.
   */
  writes = 0;

  constructor(readonly name: string) {}

  /** Opens the log for a new life: the image left by the last one, or a fresh log. */
  async open(report: (line: string) => void, _owner?: unknown, _machine?: string, writer = `${this.name}:1`): Promise<OpenedLog> {
    const faults = {
      committing: () => void this.writes++,
      failWrites: () => {
        if (!this.full) return null;
        this.refusals++;
        return new Database.SqliteError('database or disk is full', 'SQLITE_FULL');
      },
    };
    // The sim has no other process on the file: the poll that looks for their appends would only be noise.
    const options = { pollMs: 2 ** 31 - 1, writer, faults, report, foreignRows: 'fail' as const };
    // A fresh disk starts from a migrated empty log, made once per process (the migrations cost more than a world's appends).
    const image = this.db === null ? await emptyLog() : this.db.serialize();
    const store = new SqliteEventStore(new Database(image), options);
    this.db = store.db;
    return withoutHolds(store);
  }

  /** The log as it stands (committed rows only). */
  get current(): Database.Database {
    if (!this.db) throw new Error(`disk ${this.name} was never opened`);
    return this.db;
  }

  /** A read-only view of the committed log, for the checks (replay, rebuild): a copy, so nothing live is touched. */
  async snapshot(): Promise<SqliteEventStore> {
    return snapshotOf(this.current);
  }
}

/** A read-only view of a committed log, for the checks (replay, rebuild): a copy, so nothing live is touched. */
export function snapshotOf(db: Database.Database): SqliteEventStore {
  return new SqliteEventStore(new Database(db.serialize()), { pollMs: 2 ** 31 - 1, foreignRows: 'fail' });
}

let empty: Buffer | null = null;

/** A migrated empty log's image. */
export async function emptyLog(): Promise<Buffer> {
  if (!empty) {
    const store = await openSqliteStore(':memory:', { pollMs: 2 ** 31 - 1 });
    empty = store.db.serialize();
    await store.close();
  }
  return empty;
}

/**
 * The store with its group-commit hold turned off: a held batch waits on `performance.now()` (real
 * time), which would let real time decide which appends share a commit. Unheld, a batch is what one
 * turn of the event loop appended: a function of the world alone.
 */
export function withoutHolds(store: SqliteEventStore, committed?: () => void): OpenedLog {
  // Each method bound once, not at every call: the lives call their store thousands of times a world.
  const bound = new Map<(...args: never[]) => unknown, unknown>();
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'holdCommits') return () => () => undefined;
      // Who hears of each append that committed rows (the shared log's NOTIFY).
      if (property === 'append' && committed)
        return (request: AppendRequest) =>
          target.append(request).then((result) => {
            if (result.ok && result.events.length > 0) committed();
            return result;
          });
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      let method = bound.get(value);
      if (method === undefined) bound.set(value, (method = value.bind(target)));
      return method;
    },
  });
}
