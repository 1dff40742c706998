import Database from 'better-sqlite3';
import pg from 'pg';
import { takeWhile } from 'rxjs';
import { LeasedPeers, type LeasedPeersOptions, type PeerTables } from '../apps/board/peers/leasedPeers.ts';
import type { EventStore, OpenedLog } from '../runtime/store/eventStore.ts';
import { openPostgresStore, type PostgresEventStore } from '../runtime/store/postgres/postgresEventStore.ts';
import type { SqliteEventStore } from '../runtime/store/sqlite/sqliteEventStore.ts';
import { emptyLog, snapshotOf } from './disk.ts';
import { SimPeerTables } from './peerTables.ts';
import type { Owner, Scheduler } from './scheduler.ts';
import { tracked } from './settle.ts';

/** A PostgreSQL error as the server says it (its SQLSTATE in `code`), for the commit path's fault seam. */
function pgError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

const MIRROR_LEASE = `INSERT INTO board_leases (name, holder, epoch, expires_at) VALUES ($1, $2, $3, $4::timestamptz)
  ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, epoch = excluded.epoch, expires_at = excluded.expires_at`;

/**
 * The boards' shared log on a real PostgreSQL database (docs/rules.md#postgresql-board): each board life
 * opens a PostgresEventStore of its own on it, writing as its own writer, so every append goes through
 * PostgreSQL's commit path (the advisory lock, the version and guard checks, the lease rows read under
 * the lock, NOTIFY) and every read through its statements; a board hears the other's commits by LISTEN.
 * Every call of a store is `tracked`: a step ends only once PostgreSQL answered it.
 *
 * The peer tables (the chores' lease, the boards' liveness, the runs' heartbeats) are kept on the
 * world's virtual clock (sim/peerTables.ts), as PostgreSQL's would be on the database's: the lease rows
 * the commit path reads are mirrored into PostgreSQL's `board_leases` with their holder and epoch,
 * live (`infinity`) or expired (`-infinity`) as the virtual clock has them at each step. The invariants
 * read a copy of the log kept in SQLite, caught up after every step (`catchUp`).
 */
export class PgSharedLog {
  readonly name = 'board';
  /** While true, every commit fails as PostgreSQL's disk full (53100). */
  full = false;
  refusals = 0;
  private mirror: Database.Database | null = null;
  private tables: SimPeerTables | null = null;
  private readonly stores: { readonly store: PostgresEventStore; readonly owner: Owner }[] = [];
  private admin: pg.Client | null = null;
  private mirrored = 0;
  /** A store committed rows since the last `catchUp`: there is something to copy. */
  private committed = true;
  /** The lease rows as last mirrored: `holder epoch live` by name. */
  private readonly leases = new Map<string, string>();

  constructor(
    /** An empty log: a database, or a schema of one (its URL's `search_path`). */
    private readonly url: string,
    private readonly scheduler: Scheduler,
  ) {}

  async open(report: (line: string) => void, owner: Owner, _board: string, writer: string): Promise<OpenedLog> {
    await this.ready();
    const faults = {
      failWrites: () => {
        // SIGKILLed: its connection is gone, the server rolls back what it had begun.
        if (!owner.alive) return pgError('terminating connection: its process died', '57P01');
        if (!this.full) return null;
        this.refusals++;
        return pgError('could not extend file: No space left on device', '53100');
      },
    };
    // No poll: LISTEN wakes the other boards (its real timer would let real time into the world).
    const store = await tracked(openPostgresStore(this.url, { writer, pollMs: 2 ** 31 - 1, faults, report, foreignRows: 'fail' }));
    this.stores.push({ store, owner });
    return trackedStore(store, owner, () => {
      this.committed = true;
    });
  }

  /** The peers of one board life, on the virtual clock's tables, the leases they take mirrored into PostgreSQL. */
  peers(owner: Owner, identity: string, options: Omit<LeasedPeersOptions, 'monotonic'>): LeasedPeers {
    if (!this.tables) throw new Error(`log ${this.name} was never opened`);
    const tables = this.tables.connection((writes) => {
      if (!owner.alive) return new Database.SqliteError('the connection of a dead process', 'SQLITE_IOERR');
      return writes && this.full ? new Database.SqliteError('database or disk is full', 'SQLITE_FULL') : null;
    });
    const take: PeerTables['take'] = async (name, holder, ttlMs) => {
      const epoch = await tables.take(name, holder, ttlMs);
      await this.mirrorLeases();
      return epoch;
    };
    return new LeasedPeers({ ...tables, take }, identity, { ...options, monotonic: () => this.scheduler.now });
  }

  /** After a step: the lease rows as the virtual clock has them now, and the log's new rows copied for the invariants. */
  async catchUp(): Promise<void> {
    if (!this.admin || !this.mirror) return;
    // A dead life's connections go with it (the server drops a killed process's).
    for (const dead of this.stores.filter(({ owner }) => !owner.alive)) {
      this.stores.splice(this.stores.indexOf(dead), 1);
      await tracked(dead.store.close().catch(() => undefined));
    }
    await this.mirrorLeases();
    if (!this.committed) return;
    this.committed = false;
    const { rows } = await tracked(
      this.admin.query<[string, string, number, string, string, string, string | null, string]>({
        text: 'SELECT seq, stream, version, type, data, at, cause, actor FROM events WHERE seq > $1 ORDER BY seq',
        values: [this.mirrored],
        rowMode: 'array',
      }),
    );
    const insert = this.mirror.prepare('INSERT INTO events (seq, stream, version, type, data, at, cause, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    this.mirror.transaction(() => {
      for (const [seq, stream, version, type, data, at, cause, actor] of rows) {
        insert.run(Number(seq), stream, version, type, data, Number(at), cause === null ? null : Number(cause), actor);
        this.mirrored = Number(seq);
      }
    })();
  }

  /** The log as it stands (committed rows, as of the last `catchUp`). */
  get current(): Database.Database {
    if (!this.mirror) throw new Error(`log ${this.name} was never opened`);
    return this.mirror;
  }

  async snapshot(): Promise<SqliteEventStore> {
    await this.catchUp();
    return snapshotOf(this.current);
  }

  /** Every connection closed (the stores of dead lives too: their processes are gone). */
  async close(): Promise<void> {
    await Promise.all(this.stores.map(({ store }) => store.close().catch(() => undefined)));
    await this.admin?.end().catch(() => undefined);
    this.admin = null;
  }

  private async ready(): Promise<void> {
    if (this.mirror) return;
    this.mirror = new Database(await emptyLog());
    this.tables = new SimPeerTables(this.mirror, () => this.scheduler.now);
    const admin = new pg.Client({ connectionString: this.url });
    admin.on('error', () => undefined);
    await tracked(admin.connect());
    this.admin = admin;
  }

  /** Each lease row whose holder, epoch or liveness changed since it was last mirrored. */
  private async mirrorLeases(): Promise<void> {
    const admin = this.admin;
    if (!admin || !this.tables) return;
    const now = this.scheduler.now;
    const rows = this.current.prepare('SELECT name, holder, epoch, expires_at FROM board_leases').all() as {
      name: string;
      holder: string;
      epoch: number;
      expires_at: number;
    }[];
    for (const row of rows) {
      const live = row.expires_at > now;
      const said = `${row.holder} ${row.epoch} ${live}`;
      if (this.leases.get(row.name) === said) continue;
      await tracked(admin.query(MIRROR_LEASE, [row.name, row.holder, row.epoch, live ? 'infinity' : '-infinity']));
      this.leases.set(row.name, said);
    }
  }
}

/**
 * The store with its group-commit hold turned off (see withoutHolds) and every call tracked until
 * PostgreSQL answers, its checkpoints' and snapshots' included.
 */
function trackedStore(store: PostgresEventStore, owner: Owner, committed: () => void): OpenedLog {
  const append: EventStore['append'] = (request) =>
    tracked(
      store.append(request).then((result) => {
        if (result.ok && result.events.length > 0) committed();
        return result;
      }),
    );
  const holdCommits = () => () => undefined;
  // A killed process hears nothing more: its LISTEN connection is gone with it.
  const subscribe: EventStore['subscribe'] = (...args) => store.subscribe(...args).pipe(takeWhile(() => owner.alive));
  const instead: Record<string | symbol, unknown> = { holdCommits, append, subscribe };
  return trackedCalls(store, (property) => instead[property]);
}

function trackedCalls<T extends object>(target: T, instead: (property: string | symbol) => unknown = () => undefined): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const replaced = instead(property);
      if (replaced !== undefined) return replaced;
      const value = Reflect.get(object, property, receiver);
      if (property === 'checkpoints' || property === 'snapshots') return trackedCalls(value as object);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = value.apply(object, args);
        return result instanceof Promise ? tracked(result) : result;
      };
    },
  });
}
