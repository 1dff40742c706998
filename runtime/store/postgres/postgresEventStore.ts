import { randomBytes, randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { interval, map, merge, type Observable, Subject } from 'rxjs';
import { type DomainEvent, codec as defaultCodec } from '../../../events/catalog.ts';
import type { AnyEventCodec } from '../../../events/codec.ts';
import type { ComputerEvents } from '../computerEvents.ts';
import type { AppendRequest, AppendResult, CheckpointStore, EventStore, FoldRow, SharedLog, SnapshotStore } from '../eventStore.ts';
import { followLog, type Wake } from '../followLog.ts';
import { failBatch, GroupCommit, type PendingAppend } from '../groupCommit.ts';
import { redactUrl } from '../logLocation.ts';
import type { LogQueries } from '../logQueries.ts';
import { type LogUnwritableError, WriteOutage } from '../logUnwritable.ts';
import { checkRequest } from '../planAppends.ts';
import { sharedLogWriter } from '../processWriter.ts';
import { EventPage, type ForeignRowPolicy, ID_RANGE_END, mergeEntityIds, type RawRow, RowDecoder } from '../rowDecoder.ts';
import { type FoldColumns, scanInChunks } from '../scanRows.ts';
import type { SnapshotPolicy } from '../sqlite/snapshots.ts';
import { checkLogSchema, migrateToLatest } from './migrations.ts';
import { commitBatch, type LogIdentity, type PgStoreFaults, STATEMENT_TIMEOUT_MS } from './pgAppend.ts';
import { postgresComputerEvents } from './pgComputerEvents.ts';
import { APPEND_CONNECTIONS, connectionConfig, openPool } from './pgConnection.ts';
import { pgCheckpoints, pgSnapshots, type Query, type Transaction } from './pgSnapshots.ts';
import { asPgUnwritable } from './pgUnwritable.ts';

export interface PostgresStoreOptions {
  /** How often a live subscription reads the log anyway: the backstop of LISTEN/NOTIFY (a lost connection, a missed notice). */
  readonly pollMs?: number;
  /** The event types it reads and writes: the catalog's by default (a test's store adds its fixtures' to them). */
  readonly codec?: AnyEventCodec;
  /** Defaults to this process's `host#incarnation:pid` (sharedLogWriter). */
  readonly writer?: string;
  /** How often checkpoints are also kept as snapshots, and how many are kept (see SnapshotStore). */
  readonly snapshots?: SnapshotPolicy;
  /** Only for tests: faults injected into the commit path (see PgStoreFaults). */
  readonly faults?: PgStoreFaults;
  /** Where the store says that its writes began to fail, and that they go through again (stderr by default). */
  readonly report?: (line: string) => void;
  /** What a read does with a row this version cannot read (see ForeignRowPolicy). */
  readonly foreignRows?: ForeignRowPolicy;
  /** Only for tests: how long a statement (an append's, a read's) may go unanswered (STATEMENT_TIMEOUT_MS). */
  readonly statementTimeoutMs?: number;
  /** Only for tests: how soon the server ends an append transaction of this store left waiting (IDLE_IN_TRANSACTION_MS). */
  readonly idleInTransactionMs?: number;
}

const COLUMNS = 'seq, stream, version, type, data, at, cause, actor';
const SCAN_CHUNK = 2000;
const POLL_MS = 500;
/** Real time, as the server is reconnected to in (docs/architecture.md#real-time-waits). */
const LISTEN_RETRY_MS = 1000;
/**
 * An entity's name after its owner prefix, and the ids events' data names: each spelled exactly as
 * migrations 0003 and 0004 indexed it, or PostgreSQL scans the log instead.
 */
const ENTITY = `substr(stream, strpos(stream, '/') + 1)`;
const mention = (field: 'runId' | 'sessionId') => `((data::json ->> '${field}') COLLATE "C")`;
const mentioned = (field: 'runId' | 'sessionId') => `(data::json ->> '${field}') IS NOT NULL`;

const SQL = {
  after: `SELECT ${COLUMNS} FROM events WHERE seq > $1 ORDER BY seq LIMIT $2`,
  foldRows: 'SELECT seq, stream, type, data, at, cause FROM events WHERE seq > $1 ORDER BY seq LIMIT $2',
  stream: `SELECT ${COLUMNS} FROM events WHERE stream = $1 AND version > $2 ORDER BY version`,
  streamBackwards: `SELECT ${COLUMNS} FROM events WHERE stream = $1 AND version < $2 ORDER BY version DESC LIMIT 16`,
  entity: `SELECT ${COLUMNS} FROM events WHERE ${ENTITY} = $1 ORDER BY seq`,
  mentions: (field: 'runId' | 'sessionId') =>
    `SELECT ${COLUMNS} FROM events WHERE ${ENTITY} = $1
     UNION SELECT ${COLUMNS} FROM events WHERE ${mentioned(field)} AND ${mention(field)} = $2
     ORDER BY seq`,
  streamIds: `SELECT DISTINCT ${ENTITY} FROM events WHERE ${ENTITY} >= $1 AND ${ENTITY} < $2 ORDER BY 1 LIMIT $3`,
  mentionedIds: (field: 'runId' | 'sessionId') =>
    `SELECT DISTINCT ${mention(field)} FROM events WHERE ${mentioned(field)} AND ${mention(field)} >= $1 AND ${mention(field)} < $2 ORDER BY 1 LIMIT $3`,
  streamVersion: 'SELECT coalesce(max(version), 0) FROM events WHERE stream = $1',
  headSeq: 'SELECT coalesce(max(seq), 0) FROM events',
  /** One lock and one channel per log: a schema of its own is a log of its own, on the same database. */
  identity: `SELECT current_schema(), hashtextextended(current_schema() || '/runledger.events', 0)::text`,
};

/**
 * Opens (migrating its schema as needed) the log in the PostgreSQL database at `url` (the schema of its
 * `search_path`, `public` by default). A server that cannot be reached, or refuses the login, is a
 * LogUnwritableError naming the URL without its password. With `existing`, the database must already
 * hold a runledger log: it is checked before the migrations could create one.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions & { existing?: boolean } = {}): Promise<PostgresEventStore> {
  const where = redactUrl(url);
  const idle = options.idleInTransactionMs === undefined ? {} : { idleInTransactionMs: options.idleInTransactionMs };
  const pool = openPool(url);
  // The idle-in-transaction limit a test sets is the appends': their transactions hold the write lock.
  const appends = openPool(url, { ...idle, max: APPEND_CONNECTIONS, purpose: 'appends' });
  try {
    const identity = await prepare(pool, where, async (client) => {
      if (options.existing) await checkLogSchema(client, where, { older: 'fine' });
    });
    // kysely only runs the migrations: every read and write of the log is a named pg statement.
    await migrateToLatest(new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) }), identity.schema).catch((error) => {
      throw asPgUnwritable(error, where);
    });
    const store = new PostgresEventStore(pool, where, identity, options, appends);
    await store.listen(url);
    return store;
  } catch (error) {
    await Promise.all([pool.end().catch(() => undefined), appends.end().catch(() => undefined)]);
    throw error;
  }
}

/**
 * Opens an existing log only to read it (`replay`, `rebuild`, `audit`): every transaction is
 * read-only (PostgreSQL refuses each write), nothing is created or migrated, and a database holding no
 * runledger log of this version's schema is refused, named, before anything is read.
 */
export async function openPostgresStoreToRead(url: string, options: Omit<PostgresStoreOptions, 'faults'> = {}): Promise<PostgresEventStore> {
  const where = redactUrl(url);
  const pool = openPool(url, { readOnly: true, max: 3 });
  try {
    const identity = await prepare(pool, where, (client) => checkLogSchema(client, where, { older: 'refused' }));
    const store = new PostgresEventStore(pool, where, identity, options);
    await store.listen(url, { readOnly: true });
    return store;
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}

async function prepare(pool: pg.Pool, where: string, check: (client: pg.PoolClient) => Promise<void>): Promise<LogIdentity> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw asPgUnwritable(error, where);
  }
  try {
    await check(client);
    const [schema, key] = (await client.query<[string | null, string]>({ text: SQL.identity, rowMode: 'array' })).rows[0]!;
    if (schema === null) throw new Error(`${where} has no schema to keep the log in: its search_path names none that exists`);
    return { schema, lockKey: key, channel: `runledger_events_${key.replace('-', 'n')}` };
  } catch (error) {
    throw asPgUnwritable(error, where);
  } finally {
    client.release();
  }
}

/**
 * The EventStore on PostgreSQL, for several boards on one database. Appends of one process share a
 * transaction (group commit: those that arrive while one commits go in the next), and every append
 * transaction takes the log's advisory lock (see commitBatch), so seqs are gapless and in commit
 * order across processes. A commit is announced with NOTIFY on the log's channel: subscribers in
 * other processes read the log when told, and every `pollMs` anyway.
 */
export class PostgresEventStore implements EventStore, LogQueries {
  readonly writer: string;
  /** The log is in the server's database, not a file of this machine's. */
  readonly logFile = null;
  readonly checkpoints: CheckpointStore;
  readonly snapshots: SnapshotStore;
  private readonly codec: AnyEventCodec;
  private readonly rows: RowDecoder;
  private readonly commits = new Subject<readonly DomainEvent[]>();
  /** Commits of other processes, as LISTEN hears of them. */
  private readonly notices = new Subject<null>();
  private readonly wake: Observable<Wake>;
  /** This store's own NOTIFY payload: its own commits it hands over itself, and ignores when they are announced. */
  private readonly self = randomUUID();
  private listener: pg.Client | null = null;
  private listenRetry: NodeJS.Timeout | null = null;
  /** One transaction at a time, so a chain's later append sees how its earlier one ended. */
  private readonly group = new GroupCommit((batch) => this.commit(batch));
  private closed = false;
  private readonly outage: WriteOutage;
  private readonly faults: PgStoreFaults | undefined;
  private readonly statementTimeoutMs: number;

  constructor(
    private readonly pool: pg.Pool,
    /** The database, as it may be named in a message: the URL without its password. */
    readonly where: string,
    private readonly log: LogIdentity,
    options: PostgresStoreOptions = {},
    /** The group commit's own connection (APPEND_CONNECTIONS); the reads' pool for a store opened only to read. */
    private readonly appends: pg.Pool = pool,
  ) {
    this.writer = options.writer ?? sharedLogWriter();
    this.outage = new WriteOutage(where, options.report ?? ((line) => console.error(line)));
    this.codec = options.codec ?? defaultCodec;
    this.rows = new RowDecoder(this.codec, options.foreignRows);
    this.faults = options.faults;
    this.statementTimeoutMs = options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
    // The poll in real time, as the other boards append in it (docs/architecture.md#real-time-waits).
    this.wake = merge(this.commits, this.notices, interval(options.pollMs ?? POLL_MS).pipe(map(() => null)));
    const query: Query = (config) => this.query(config);
    const transaction: Transaction = (body) => this.transaction(this.pool, body);
    const snapshots = pgSnapshots(query, transaction, options.snapshots);
    this.snapshots = snapshots;
    this.checkpoints = pgCheckpoints(query, (c) => snapshots.archive(c));
  }

  /** LISTENs on the log's channel on a connection of its own, reconnecting (polling covers the gap) until closed. */
  async listen(url: string, options: { readOnly?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client(connectionConfig(url, options));
    const retry = () => {
      if (this.closed || this.listener !== client) return;
      this.listener = null;
      client.end().catch(() => undefined);
      this.listenRetry = setTimeout(() => void this.listen(url, options).catch(() => undefined), LISTEN_RETRY_MS);
      this.listenRetry.unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', (notice) => {
      if (notice.payload !== this.self) this.notices.next(null);
    });
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN "${this.log.channel}"`);
      // Whatever was committed while nobody listened is read now.
      this.notices.next(null);
    } catch (error) {
      if (this.listener !== client) return;
      retry();
      throw asPgUnwritable(error, this.where);
    }
  }

  append(request: AppendRequest): Promise<AppendResult> {
    const refusal = this.closed ? new Error('the event store is closed') : null;
    return this.group.take(request, refusal, (r) => checkRequest(this.codec, r));
  }

  holdCommits(): () => void {
    return this.group.hold();
  }

  unwritable(): LogUnwritableError | null {
    return this.outage.current;
  }

  private async commit(batch: readonly PendingAppend[]): Promise<void> {
    let results: AppendResult[];
    try {
      results = await this.transaction(this.appends, (client) =>
        commitBatch(
          client,
          this.log,
          this.self,
          this.writer,
          batch.map((p) => p.request),
          this.statementTimeoutMs,
          this.faults,
        ),
      );
    } catch (error) {
      // Rolled back whole (or the connection was lost before its COMMIT was answered): nothing of it is counted on.
      this.outage.failed(error);
      failBatch(batch, error);
      return;
    }
    const committed: DomainEvent[] = [];
    batch.forEach((p, i) => {
      const result = results[i]!;
      // Each was checked by the codec before it was queued (checkNew): a DomainEvent of its type.
      if (result.ok) committed.push(...(result.events as DomainEvent[]));
      p.resolve(result);
    });
    if (committed.length === 0) return;
    this.outage.committed();
    this.rows.keepFrom(committed[committed.length - 1]!.seq);
    this.commits.next(committed);
  }

  /** `body` in one transaction on a connection of `pool`; a connection that failed is dropped, not reused. */
  private async transaction<T>(pool: pg.Pool, body: (client: pg.ClientBase) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw asPgUnwritable(error, this.where);
    }
    // The server may end the session while the transaction holds it (a restart, a timeout, an
    // administrator): its FATAL is an 'error' event of the connection, which the pool listens to only
    // on idle ones; unheard, it would be thrown at the process. The statement in flight fails with it.
    const lost = (): void => undefined;
    client.on('error', lost);
    try {
      const result = await body(client);
      client.removeListener('error', lost);
      client.release();
      return result;
    } catch (error) {
      // Discarded, and still heard: its socket may yet fail after the pool let it go (the server gone
      // mid-transaction), and an 'error' nobody hears would end the process.
      client.release(true);
      throw asPgUnwritable(error, this.where);
    }
  }

  private async query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<R[]> {
    try {
      // A server gone silent fails the read as an outage instead of holding its reader (an actor's mailbox) for ever.
      return (await this.pool.query<R>(this.timed(config))).rows;
    } catch (error) {
      throw asPgUnwritable(error, this.where);
    }
  }

  /** `config` with this store's time limit (pg takes `query_timeout` on a query; its types do not say so). */
  private timed<C extends pg.QueryConfig>(config: C): C {
    return Object.assign({ query_timeout: this.statementTimeoutMs }, config);
  }

  /** A named statement (prepared once per connection) answering rows as arrays. */
  private async raw<R extends unknown[]>(name: string, text: string, values: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>(this.timed({ name, text, values, rowMode: 'array' }))).rows;
    } catch (error) {
      throw asPgUnwritable(error, this.where);
    }
  }

  /**
   * A named statement on a table of the log's database that holds no events (the boards' leases,
   * liveness and heartbeats, migration 0007), rows as arrays: outside the append path and its lock.
   */
  shared<R extends unknown[]>(name: string, text: string, values: unknown[]): Promise<R[]> {
    return this.raw<R>(name, text, values);
  }

  /** `body` in one transaction on a connection of the reads' pool, on tables of the log's database that hold no events (see `shared`). */
  sharedTransaction<T>(body: (client: pg.ClientBase) => Promise<T>): Promise<T> {
    return this.transaction(this.pool, async (client) => {
      await client.query('BEGIN');
      try {
        const result = await body(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async readAll(after: number, limit: number): Promise<DomainEvent[]> {
    const page = new EventPage(this.rows, after, limit);
    while (!page.take(await this.raw<RawRow>('runledger_after', SQL.after, [page.last, page.wanted])));
    return page.events;
  }

  scanRows(after: number, limit: number, visit: (row: FoldRow) => void): Promise<number> {
    return scanInChunks(after, limit, SCAN_CHUNK, (last, size) => this.raw<FoldColumns>('runledger_fold_rows', SQL.foldRows, [last, size]), visit);
  }

  async readStream(stream: string, after = 0): Promise<DomainEvent[]> {
    return this.rows.decodeAll(await this.raw<RawRow>('runledger_stream', SQL.stream, [stream, after]));
  }

  async readEntity(kindAndId: string): Promise<DomainEvent[]> {
    const kind = kindAndId.slice(0, kindAndId.indexOf(':'));
    const id = kindAndId.slice(kindAndId.indexOf(':') + 1);
    const rows =
      kind === 'run'
        ? await this.raw<RawRow>('runledger_run_mentions', SQL.mentions('runId'), [kindAndId, id])
        : kind === 'session'
          ? await this.raw<RawRow>('runledger_session_mentions', SQL.mentions('sessionId'), [kindAndId, id])
          : await this.raw<RawRow>('runledger_entity', SQL.entity, [kindAndId]);
    return this.rows.decodeAll(rows);
  }

  async entityIdsStartingWith(kind: 'run' | 'session', prefix: string, limit: number): Promise<string[]> {
    const field = kind === 'run' ? 'runId' : 'sessionId';
    const named = await this.raw<[string]>('runledger_stream_ids', SQL.streamIds, [`${kind}:${prefix}`, `${kind}:${prefix}${ID_RANGE_END}`, limit]);
    const ids = await this.raw<[unknown]>(`runledger_${kind}_ids`, SQL.mentionedIds(field), [prefix, `${prefix}${ID_RANGE_END}`, limit]);
    return mergeEntityIds(
      kind,
      prefix,
      limit,
      named.map((r) => r[0]),
      ids.map((r) => r[0]),
    );
  }

  async lastOfStream(stream: string): Promise<DomainEvent | null> {
    // Backwards past any foreign rows at its end: usually one page, one row used.
    for (let before = 2 ** 31 - 1; ; ) {
      const rows = await this.raw<RawRow>('runledger_stream_backwards', SQL.streamBackwards, [stream, before]);
      const event = this.rows.decodeFirst(rows);
      if (event) return event;
      if (rows.length < 16) return null;
      before = rows[rows.length - 1]![2];
    }
  }

  async streamVersion(stream: string): Promise<number> {
    return (await this.raw<[number]>('runledger_stream_version', SQL.streamVersion, [stream]))[0]![0];
  }

  async headSeq(): Promise<number> {
    return (await this.raw<[number]>('runledger_head_seq', SQL.headSeq, []))[0]![0];
  }

  /**
   * The board secret run tokens are derived from (docs/rules.md#wire-and-cli's run tokens), the same for every board on
   * this database: made by the first that asks, kept in `board_secrets` (migration 0006), never logged.
   */
  async boardSecret(): Promise<string> {
    await this.query({
      text: `INSERT INTO board_secrets (name, value) VALUES ('board', $1) ON CONFLICT (name) DO NOTHING`,
      values: [randomBytes(32).toString('base64url')],
    });
    // A statement of its own: it sees the row whichever board's insert won.
    return (await this.query<{ value: string }>({ text: `SELECT value FROM board_secrets WHERE name = 'board'` }))[0]!.value;
  }

  subscribe(after: number): Observable<DomainEvent> {
    return followLog((from, limit) => this.readAll(from, limit), this.wake, after);
  }

  /** Resolves once every append taken so far has committed (or failed): a reader after it sees them. */
  settle(): Promise<void> {
    return this.group.drain();
  }

  /** Many boards share a PostgreSQL log (docs/rules.md#postgresql-board): their tables are this store's. */
  get sharedLog(): SharedLog {
    return this;
  }

  reportedEvents(options: { foreignRows?: ForeignRowPolicy } = {}): ComputerEvents {
    return postgresComputerEvents(this, options);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // What is pending commits now, whoever holds it back: nothing accepted is lost to a close.
    await this.group.drain();
    this.closed = true;
    if (this.listenRetry) clearTimeout(this.listenRetry);
    const listener = this.listener;
    this.listener = null;
    this.commits.complete();
    this.notices.complete();
    await listener?.end().catch(() => undefined);
    await this.pool.end();
    if (this.appends !== this.pool) await this.appends.end();
  }
}
