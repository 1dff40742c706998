import Database from 'better-sqlite3';
import { Subject } from 'rxjs';
import { LeasedPeers, type LeasedPeersOptions } from '../apps/board/peers/leasedPeers.ts';
import type { OpenedLog } from '../runtime/store/eventStore.ts';
import { SqliteEventStore } from '../runtime/store/sqlite/sqliteEventStore.ts';
import { emptyLog, snapshotOf, withoutHolds } from './disk.ts';
import { SimPeerTables } from './peerTables.ts';
import type { Prng } from './prng.ts';
import type { Owner, Scheduler } from './scheduler.ts';

/** One board life's connection to the shared log. */
interface Handle {
  readonly owner: Owner;
  readonly board: string;
  readonly wakes: Subject<null>;
}

/**
 * The one log several boards share, as PostgreSQL is for `runledger server` on several machines (docs/rules.md#postgresql-board):
 * one in-memory SQLite database, each board life a store handle of its own on it, with a writer of its
 * own (its `host:pid`). Appends are serialised by the database (SQLite's write transaction stands for
 * the advisory lock), checked at expected versions and, as on PostgreSQL, against their guards inside
 * that transaction. A commit wakes the other handles' subscribers a few ms later (LISTEN/NOTIFY, through
 * the scheduler); no poll. A life that dies loses its connection: nothing it had queued commits after.
 * A full database refuses every handle's commits. Beside the events, the boards meet in PostgreSQL's
 * peer tables (sim/peerTables.ts): the chores' lease, whose epoch each chore's append checks in its
 * transaction, the boards' liveness rows and the runs' heartbeats.
 */
export class SharedLog {
  private db: Database.Database | null = null;
  private tables: SimPeerTables | null = null;
  private readonly handles: Handle[] = [];
  /** While true, every commit fails with SQLITE_FULL. */
  full = false;
  /** By board: how late the others' commits reach it (a `lag` fault), beyond the few ms a NOTIFY takes. */
  private readonly lagMs = new Map<string, number>();
  refusals = 0;
  /**
   * Write transactions begun on the log, by any board life (a dead one's too): while it stays put, no row
   * was added, and the invariants need not look for new ones (as on a machine's disk, sim/disk.ts).
   */
  writes = 0;

  constructor(
    readonly name: string,
    private readonly scheduler: Scheduler,
    private readonly prng: Prng,
  ) {}

  /** A connection for one board life, writing as `writer`. */
  async open(report: (line: string) => void, owner: Owner, board: string, writer: string): Promise<OpenedLog> {
    if (!this.db) {
      this.db = new Database(await emptyLog());
      this.tables = new SimPeerTables(this.db, () => this.scheduler.now);
    }
    const handle: Handle = { owner, board, wakes: new Subject<null>() };
    this.handles.push(handle);
    const faults = {
      committing: () => void this.writes++,
      failWrites: () => {
        // SIGKILLed: its connection is gone, the server rolls back what it had begun.
        if (!owner.alive) return new Database.SqliteError('the connection of a dead process', 'SQLITE_IOERR');
        if (!this.full) return null;
        this.refusals++;
        return new Database.SqliteError('database or disk is full', 'SQLITE_FULL');
      },
    };
    const store = new SqliteEventStore(this.db, {
      pollMs: 2 ** 31 - 1,
      writer,
      faults,
      report,
      foreignRows: 'fail',
      checkGuards: true,
      leases: this.tables!.leases,
      wakes: handle.wakes,
    });
    return withoutHolds(store, () => this.notify(handle));
  }

  /**
   * The peers of one board life (what `runledger server` on PostgreSQL builds, docs/rules.md#postgresql-board) on the tables of
   * this log, holding the lease as `identity`: its statements fail once the life is dead, its writes while
   * the database is full. Held on the world's time, which a paused process does not stop.
   */
  peers(owner: Owner, identity: string, options: Omit<LeasedPeersOptions, 'monotonic'>): LeasedPeers {
    if (!this.tables) throw new Error(`log ${this.name} was never opened`);
    const connection = this.tables.connection((writes) => {
      if (!owner.alive) return new Database.SqliteError('the connection of a dead process', 'SQLITE_IOERR');
      return writes && this.full ? new Database.SqliteError('database or disk is full', 'SQLITE_FULL') : null;
    });
    return new LeasedPeers(connection, identity, { ...options, monotonic: () => this.scheduler.now });
  }

  /** `board` hears the others' commits `ms` late from now on (0: on time again): its folds lag the log meanwhile. */
  lag(board: string, ms: number): void {
    if (ms > 0) this.lagMs.set(board, ms);
    else this.lagMs.delete(board);
  }

  /** A commit is announced to every other live connection (NOTIFY, delivered at COMMIT, a moment later). */
  private notify(from: Handle): void {
    for (let i = this.handles.length - 1; i >= 0; i--) if (!this.handles[i]!.owner.alive) this.handles.splice(i, 1);
    for (const handle of this.handles) {
      if (handle === from) continue;
      const late = this.prng.int(1, 20) + (this.lagMs.get(handle.board) ?? 0);
      this.scheduler.at(this.scheduler.now + late, handle.owner, `notify ${handle.board}`, () => handle.wakes.next(null));
    }
  }

  /** The log as it stands (committed rows only). */
  get current(): Database.Database {
    if (!this.db) throw new Error(`log ${this.name} was never opened`);
    return this.db;
  }

  /** A read-only view of the committed log, for the checks (replay, rebuild): a copy, so nothing live is touched. */
  async snapshot(): Promise<SqliteEventStore> {
    return snapshotOf(this.current);
  }
}
