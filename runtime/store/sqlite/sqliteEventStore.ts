import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import Database from 'better-sqlite3';
import { map, merge, type Observable, Subject } from 'rxjs';
import { type DomainEvent, codec as defaultCodec } from '../../../events/catalog.ts';
import type { AnyEventCodec } from '../../../events/codec.ts';
import { codeOf } from '../../../events/thrown.ts';
import type { ComputerEvents } from '../computerEvents.ts';
import type { AppendRequest, AppendResult, Checkpoint, CheckpointStore, EventStore, FoldRow, SnapshotStore } from '../eventStore.ts';
import { followLog, type Wake } from '../followLog.ts';
import { failBatch, GroupCommit, type PendingAppend } from '../groupCommit.ts';
import type { LogFile, LogQueries } from '../logQueries.ts';
import { asLogUnwritable, LogUnwritableError, WriteOutage } from '../logUnwritable.ts';
import { checkRequest } from '../planAppends.ts';
import { EventPage, type ForeignRowPolicy, ID_RANGE_END, mergeEntityIds, type RawRow, RowDecoder } from '../rowDecoder.ts';
import { scanInChunks } from '../scanRows.ts';
import { commitAppends, type LeaseReader, type PreparedAppend, prepareAppendStatements, type StoreFaults, writtenData } from './appendBatch.ts';
import { ArchiveShelf, archiveFolder, type RawFoldRow } from './archiveShelf.ts';
import { sqliteComputerEvents } from './computerEventsTable.ts';
import { copyLog } from './copyLog.ts';
import { foreignCommits } from './foreignCommits.ts';
import { BUSY_TIMEOUT_MS, isLocked, LOCK_PATIENCE_MS, lockedLine, lockRetryWaitMs, OPEN_BUSY_TIMEOUT_MS } from './lockWait.ts';
import { prepareLogFile } from './logFile.ts';
import { checkLogSchema, migrateToLatest, NotALogError } from './migrations.ts';
import { onFirstUse } from './onFirstUse.ts';
import { type SnapshotPolicy, sqliteSnapshots } from './snapshots.ts';
import { replayStretches } from './startingCheckpoints.ts';
import { WalBound, type WalPolicy } from './walBound.ts';
import { type SyncFaults, WalSync } from './walSync.ts';

export interface SqliteStoreOptions {
  /**
   * `full` (the default): no append is answered, and no subscriber hears of a commit, before it is on
   * disk, so a decision survives a power cut; `normal` survives a crash of the process but may lose the
   * last commits on power loss. Either way the connection commits with `synchronous=NORMAL`; under
   * `full` the store then fsyncs the WAL off the main thread (WalSync), one fsync for each group commit.
   */
  readonly sync?: 'full' | 'normal';
  /**
   * How often a live subscription looks for appends made by another process where the log's folder
   * cannot be watched (where it can, a change to the log's files wakes it, see foreignCommits).
   */
  readonly pollMs?: number;
  /** Only for tests: hear of another process's commits by the poll and `wakes` alone, not by the folder's reports. */
  readonly unwatched?: boolean;
  /** The event types it reads and writes: the catalog's by default (a test's store adds its fixtures' to them). */
  readonly codec?: AnyEventCodec;
  /** Defaults to this process's `host:pid`. */
  readonly writer?: string;
  /** How often checkpoints are also kept as snapshots, and how many are kept (see SnapshotStore). */
  readonly snapshots?: SnapshotPolicy;
  /** Only for tests: failures injected into the commit path (see StoreFaults) and its fsync (SyncFaults). */
  readonly faults?: StoreFaults & SyncFaults;
  /** Where the store says that its writes began to fail, and that they go through again (stderr by default). */
  readonly report?: (line: string) => void;
  /** What a read does with a row this version cannot read (see ForeignRowPolicy). */
  readonly foreignRows?: ForeignRowPolicy;
  /**
   * Check appends' guards (AppendGuard) inside the write transaction, as the PostgreSQL store does: for
   * a log on which several writers decide for one scope. A board's log file has one board (its lock
   * file), so it is off; the simulator's two boards share one log and turn it on.
   */
  readonly checkGuards?: boolean;
  /**
   * With `checkGuards`: where the lease rows chores' appends name (AppendLease) are read, inside the
   * write transaction, as the PostgreSQL store reads board_leases. Without it leases are not checked.
   */
  readonly leases?: LeaseReader;
  /**
   * What else wakes its subscribers, besides its own commits and the poll: another writer's commit
   * announced (the simulator's NOTIFY between two boards on one log).
   */
  readonly wakes?: Observable<unknown>;
  /** How big the WAL may grow before the store cuts it back, and how often it looks (see WalBound); for tests. */
  readonly wal?: WalPolicy;
}

const COLUMNS = 'seq, stream, version, type, data, at, cause, actor';
const SCAN_CHUNK = 1000;
/**
 * The events of one entity across owners. Its WHERE must spell the expression exactly as migration
 * 0003 indexed it (a stream's name after its owner prefix), or SQLite scans the whole log instead.
 */
export const SELECT_ENTITY = `SELECT ${COLUMNS} FROM events WHERE substr(stream, instr(stream, '/') + 1) = ? ORDER BY seq`;
/** An entity's own streams, and every other event whose data names it (`$.runId` or `$.sessionId`). */
const selectMentions = (field: 'runId' | 'sessionId') =>
  `SELECT ${COLUMNS} FROM events WHERE substr(stream, instr(stream, '/') + 1) = ?
   UNION SELECT ${COLUMNS} FROM events WHERE json_extract(data, '$.${field}') = ? AND json_extract(data, '$.${field}') IS NOT NULL
   ORDER BY seq`;

/**
 * Entity ids in a range, through the indexes of migrations 0003 (streams) and 0004 (data): the range
 * `[kind:prefix, kind:prefix~)` holds every id starting with `prefix`, as ids are of [A-Za-z0-9-] (all below `~`).
 */
const STREAM_ENTITY = `substr(stream, instr(stream, '/') + 1)`;
const selectStreamIdsInRange = `SELECT DISTINCT ${STREAM_ENTITY} FROM events WHERE ${STREAM_ENTITY} >= ? AND ${STREAM_ENTITY} < ? ORDER BY ${STREAM_ENTITY} LIMIT ?`;
const selectMentionedIdsInRange = (field: 'runId' | 'sessionId') =>
  `SELECT DISTINCT json_extract(data, '$.${field}') FROM events WHERE json_extract(data, '$.${field}') IS NOT NULL AND json_extract(data, '$.${field}') >= ? AND json_extract(data, '$.${field}') < ? ORDER BY json_extract(data, '$.${field}') LIMIT ?`;

/**
 * Opens (creating the folder, the file and the schema as needed) the log at `path`; a log that cannot
 * be opened or written is refused with a LogUnwritableError naming it. With `existing`, the file must
 * already be a runledger log: it is checked before the migrations could write their tables in it.
 */
/**
 * The pages of the log SQLite keeps in the process, in KiB (negative: a size, not a count of pages):
 * SQLite's own default, 2 MiB. better-sqlite3 builds it with 16 MiB, which a daemon's log fills within
 * a few thousand runs and then holds for good (its RSS grew by 23 MB from 500 runs to 3,000, then stayed,
 * bench/crashRestart.ts). Reads are of the newest rows and of one stream by its index: pages the few MiB
 * keep, and the file's others are in the OS's cache for the next read anyway.
 */
const PAGE_CACHE_KIB = -2_000;

export async function openSqliteStore(path: string, options: SqliteStoreOptions & { existing?: boolean } = {}): Promise<SqliteEventStore> {
  if (options.existing) mustExist(path);
  if (path !== ':memory:') prepareLogFile(path);
  let db: Database.Database;
  try {
    db = new Database(path, { fileMustExist: options.existing === true });
  } catch (error) {
    throw asLogUnwritable(error, path);
  }
  try {
    // A file the caller says is a log is checked before the migrations could write their tables in it.
    if (options.existing) checkLogSchema(db, path, { older: 'fine' });
    // Opening may wait for another process's commit, once; from then on a write waits off the main thread (see LockWait).
    db.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    // The fsync of `full` is the store's own, off the main thread (WalSync): SQLite's, under FULL, held
    // the event loop for half its busy time.
    db.pragma('synchronous = NORMAL');
    db.pragma(`cache_size = ${PAGE_CACHE_KIB}`);
    // kysely only runs the migrations: every read and write of the log is a prepared better-sqlite3 statement.
    await migrateToLatest(db);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    const durable = options.sync === 'normal' || path === ':memory:' ? null : new WalSync(`${path}-wal`, options.faults);
    if (path === ':memory:') return new SqliteEventStore(db, options, durable);
    const report = options.report ?? ((line: string) => console.error(line));
    return new SqliteEventStore(db, options, durable, new ArchiveShelf(path), new WalBound(db, path, report, options.wal));
  } catch (error) {
    db.close();
    throw asLogUnwritable(error, path);
  }
}

/**
 * Opens an existing log only to read it (`replay`, `rebuild`, `audit`): SQLite itself refuses every
 * write, nothing is created or migrated, and a file that is not a runledger log of this version's
 * schema is refused, named, before anything is read.
 */
export async function openSqliteStoreToRead(path: string, options: Omit<SqliteStoreOptions, 'sync'> = {}): Promise<SqliteEventStore> {
  mustExist(path);
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    checkLogSchema(db, path, { older: 'refused' });
    db.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`);
    return new SqliteEventStore(db, options, null, new ArchiveShelf(path));
  } catch (error) {
    db.close();
    throw error;
  }
}

function mustExist(path: string): void {
  if (!existsSync(path)) throw NotALogError.missing(path);
}

export class SqliteEventStore implements EventStore, LogQueries {
  readonly writer: string;
  /** One board holds a SQLite log, by its lock file. */
  readonly sharedLog = null;
  /** The file it was opened on; none for a log in memory (a test's, the simulator's). */
  readonly logFile: LogFile | null;
  readonly checkpoints: CheckpointStore;
  readonly snapshots: SnapshotStore;
  private readonly codec: AnyEventCodec;
  private readonly commits = new Subject<readonly DomainEvent[]>();
  private readonly wake: Observable<Wake>;
  private readonly statements: PreparedAppend;
  // Each statement's row type is what its SELECT returns in raw (array) or pluck (first column) mode:
  // SQLite does not type its answers, so these are declared here, once, beside the SQL.
  private readonly selectAfter: () => Database.Statement<[number, number, number], RawRow>;
  private readonly selectFoldRows: () => Database.Statement<[number, number, number], RawFoldRow>;
  private readonly selectStream: () => Database.Statement<[string, number, number], RawRow>;
  private readonly selectStreamBackwards: () => Database.Statement<[string, number], RawRow>;
  private readonly selectStreamVersion: () => Database.Statement<[string, number], number>;
  private readonly selectRunMentions: () => Database.Statement<[string, string], RawRow>;
  private readonly selectSessionMentions: () => Database.Statement<[string, string], RawRow>;
  private readonly selectEntity: () => Database.Statement<[string], RawRow>;
  private readonly selectLiveFirst: () => Database.Statement<[], number>;
  private readonly selectStreamIds: () => Database.Statement<[string, string, number], string>;
  /** The ids found in events' data: whatever JSON put there, checked to be text where they are read. */
  private readonly selectMentionedIds: Record<'run' | 'session', () => Database.Statement<[string, string, number], unknown>>;
  private readonly group = new GroupCommit((batch) => this.commitBatch(batch));
  private closed = false;
  /** Set from a commit that failed for a reason of the machine until one succeeds: the outage, told once. */
  private readonly outage: WriteOutage;
  /**
   * The durable watermark: the first seq this store committed whose fsync has not ended yet (none:
   * infinity). Every read of events stops before it (subscribers, followers, a stream's events and its
   * version), so nothing reaches anyone before it is on disk; only the write transaction's own version
   * check sees past it. A stream's version read meanwhile may be stale: its append is then refused and
   * retried, as after another writer's.
   */
  private undurableFrom = Number.POSITIVE_INFINITY;
  /**
   * Set when an fsync failed: after a failed fsync the kernel may have dropped the pages it could not
   * write and a later fsync succeed without them (PostgreSQL's "fsyncgate"), so nothing committed since
   * the last good one can ever be called durable by this connection. The store takes no append again
   * and hides those commits from its readers: the log must be reopened, as after a crash, for what is
   * really on disk to be known.
   */
  private broken: LogUnwritableError | null = null;
  private readonly report: (line: string) => void;
  private readonly rows: RowDecoder;
  /** Each append's events' data as the catalog read it when it was taken: its decoder keeps them once committed. */
  private readonly checked = new WeakMap<AppendRequest, readonly unknown[]>();

  constructor(
    readonly db: Database.Database,
    options: SqliteStoreOptions = {},
    /** The fsync of `--sync full` (see WalSync); null when each commit is answered as soon as it ends. */
    private readonly durable: WalSync | null = null,
    /**
     * The sealed segments that left the live log (docs/retention.md): every read of older events reads
     * through them, so no reader, nor an append's version, ever sees the live log's cut.
     */
    readonly archives: ArchiveShelf | null = null,
    /** The WAL kept bounded under a long reader (see WalBound); none for a store that only reads. */
    private readonly walBound: WalBound | null = null,
  ) {
    this.writer = options.writer ?? `${hostname()}:${process.pid}`;
    this.report = options.report ?? ((line) => console.error(line));
    this.outage = new WriteOutage(db.name, this.report);
    this.codec = options.codec ?? defaultCodec;
    this.rows = new RowDecoder(this.codec, options.foreignRows);
    this.statements = prepareAppendStatements(
      db,
      options.faults,
      options.checkGuards === true,
      options.checkGuards ? (options.leases ?? null) : null,
      archives ? (stream) => this.archivedVersion(stream) : null,
    );
    this.selectAfter = onFirstUse(() =>
      db.prepare<[number, number, number], RawRow>(`SELECT ${COLUMNS} FROM events WHERE seq > ? AND seq < ? ORDER BY seq LIMIT ?`).raw(true),
    );
    this.selectFoldRows = onFirstUse(() =>
      db
        .prepare<[number, number, number], RawFoldRow>(
          'SELECT seq, stream, type, data, at, cause FROM events WHERE seq > ? AND seq < ? ORDER BY seq LIMIT ?',
        )
        .raw(true),
    );
    this.selectStream = onFirstUse(() =>
      db
        .prepare<[string, number, number], RawRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND version > ? AND seq < ? ORDER BY version`)
        .raw(true),
    );
    this.selectStreamBackwards = onFirstUse(() =>
      db.prepare<[string, number], RawRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND seq < ? ORDER BY version DESC`).raw(true),
    );
    // Backwards down the stream's index past the rows not yet durable (a few at most), not max(version) over all of them.
    this.selectStreamVersion = onFirstUse(() =>
      db.prepare<[string, number], number>('SELECT version FROM events WHERE stream = ? AND seq < ? ORDER BY version DESC LIMIT 1').pluck(true),
    );
    this.selectEntity = onFirstUse(() => db.prepare<[string], RawRow>(SELECT_ENTITY).raw(true));
    this.selectLiveFirst = onFirstUse(() => db.prepare<[], number>('SELECT seq FROM events ORDER BY seq LIMIT 1').pluck(true));
    this.selectRunMentions = onFirstUse(() => db.prepare<[string, string], RawRow>(selectMentions('runId')).raw(true));
    this.selectSessionMentions = onFirstUse(() => db.prepare<[string, string], RawRow>(selectMentions('sessionId')).raw(true));
    this.selectStreamIds = onFirstUse(() => db.prepare<[string, string, number], string>(selectStreamIdsInRange).pluck(true));
    this.selectMentionedIds = {
      run: onFirstUse(() => db.prepare<[string, string, number], unknown>(selectMentionedIdsInRange('runId')).pluck(true)),
      session: onFirstUse(() => db.prepare<[string, string, number], unknown>(selectMentionedIdsInRange('sessionId')).pluck(true)),
    };
    // Another process's commits (a CLI adding a computer, a second daemon on the file), by SQLite's
    // data_version, which moves only when another connection commits: a wake only when it moved. A log in
    // memory has no other process.
    const foreign = db.memory
      ? []
      : [foreignCommits(options.unwatched ? null : db.name, this.dataVersionMoved(db), { pollMs: options.pollMs ?? 250 })];
    const ticks = [...foreign, ...(options.wakes ? [options.wakes] : [])].map((t) => t.pipe(map((): Wake => null)));
    this.wake = merge(this.commits, ...ticks);
    const snapshots = sqliteSnapshots(db, options.snapshots);
    this.snapshots = snapshots;
    this.checkpoints = sqliteCheckpoints(db, (c) => snapshots.archive(c));
    this.logFile = db.memory ? null : this.fileOf(db.name);
  }

  /** Whether SQLite's data_version moved since it was last asked (first: since now). */
  private dataVersionMoved(db: Database.Database): () => boolean {
    const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck(true);
    let seen = dataVersion.get();
    return () => {
      if (this.closed) return false;
      const now = dataVersion.get();
      if (now === seen) return false;
      seen = now;
      return true;
    };
  }

  private fileOf(path: string): LogFile {
    return {
      path,
      archiveFolder: archiveFolder(path),
      replayStretches: () => replayStretches(this, path),
      copyTo: (target) => copyLog(this.db, target),
    };
  }

  append(request: AppendRequest): Promise<AppendResult> {
    const refusal = this.closed ? new Error('the event store is closed') : this.broken;
    return this.group.take(request, refusal, (r) => void this.checked.set(r, checkRequest(this.codec, r)));
  }

  holdCommits(): () => void {
    return this.group.hold();
  }

  unwritable(): LogUnwritableError | null {
    return this.broken ?? this.outage.current;
  }

  /** The fsyncs this store did to make its commits durable (none under `--sync normal`): for the benches. */
  get fsyncs(): number {
    return this.durable?.fsyncs ?? 0;
  }

  /**
   * Commits a batch of the group commit in one transaction, synchronously; under `--sync full` it is
   * answered once an fsync begun after its commit has ended, off the main thread: one fsync for all.
   * The group commit starts the next batch a turn after that, so the appends made meanwhile gather
   * into it and a chain's later append sees how its earlier one ended, durable or not.
   */
  private commitBatch(batch: readonly PendingAppend[], since = performance.now(), attempt = 0): void | Promise<void> {
    if (this.broken) return failBatch(batch, this.broken);
    let results: AppendResult[];
    try {
      results = commitAppends(
        this.statements,
        this.writer,
        batch.map((p) => p.request),
      );
    } catch (failure) {
      // The transaction was rolled back whole: nothing of the batch is kept, and the next may commit.
      const error = asLogUnwritable(failure, this.db.name);
      // Another process's write lock, held past the short busy wait: waited for off the main thread, a
      // while, in real time on a ref'd timer (docs/architecture.md#real-time-waits), unless an outage is known already (then the writers' own retries wait, and a request is
      // told 507 at once).
      if (isLocked(error) && this.outage.current === null && performance.now() - since < LOCK_PATIENCE_MS) {
        return new Promise<void>((resolve) => setTimeout(resolve, lockRetryWaitMs(attempt))).then(() => this.commitBatch(batch, since, attempt + 1));
      }
      this.outage.failed(error, () => (isLocked(error) ? lockedLine(this.db.name) : ''));
      return failBatch(batch, error);
    }
    // One transaction gave consecutive seqs to every event it committed, across the batch's appends.
    // Each was checked by the codec before it was queued (checkNew): a DomainEvent of its type.
    const committed = results.flatMap((result) => (result.ok ? (result.events as DomainEvent[]) : []));
    if (committed.length === 0 || this.durable === null) return this.answer(batch, results, committed);
    this.undurableFrom = Math.min(this.undurableFrom, committed[0]!.seq);
    return this.durable.sync().then(
      () => {
        this.undurableFrom = Number.POSITIVE_INFINITY;
        this.answer(batch, results, committed);
        // The writers its answers wake (each run's next step) append a turn later: the next batch waits
        // that turn for them, so that the next fsync covers them too (eventsPerRun --quick: about 3.4
        // fsyncs a run without the wait, 3.1 with it).
        return new Promise<void>((resolve) => setImmediate(resolve));
      },
      (failure: unknown) => failBatch(batch, this.breakOnFailedSync(failure)),
    );
  }

  /** The fsync of a commit failed: the store is broken (see `broken`), the failure named once. */
  private breakOnFailedSync(failure: unknown): LogUnwritableError {
    const path = this.durable!.path;
    const known = asLogUnwritable(failure, path);
    const error =
      known instanceof LogUnwritableError ? known : new LogUnwritableError(path, 'io_error', codeOf(failure) ?? 'EIO', { cause: failure });
    this.broken = error;
    this.report(
      `${error.message}: the fsync of its last commits failed, and after a failed fsync no later one can vouch for them; ` +
        'this log takes no more appends (requests are answered 507) until it is reopened: restart the daemon',
    );
    return error;
  }

  /** The batch's appends answered and its events handed to the subscribers: it is as durable as `--sync` asks. */
  private answer(batch: readonly PendingAppend[], results: readonly AppendResult[], committed: readonly DomainEvent[]): void {
    batch.forEach((p, i) => {
      p.resolve(results[i]!);
    });
    if (committed.length === 0) return;
    this.outage.committed();
    this.rows.keepFrom(committed[committed.length - 1]!.seq);
    // Followers are handed each event as the decoder keeps it (frozen, as a read gives it back), not a copy made again.
    const kept = new Map<number, DomainEvent>();
    batch.forEach((p, i) => {
      const result = results[i]!;
      const read = this.checked.get(p.request);
      if (!result.ok || read === undefined) return;
      result.events.forEach((event, j) => {
        const text = writtenData.get(event);
        const remembered = text === undefined ? null : this.rows.remember(event, text, read[j]);
        if (remembered) kept.set(event.seq, remembered);
      });
    });
    this.commits.next(committed.map((event) => kept.get(event.seq) ?? event));
  }

  async readAll(after: number, limit: number): Promise<DomainEvent[]> {
    return this.readAllNow(after, limit);
  }

  /**
   * The synchronous read under `readAll`, for folds that page through millions of rows. A foreign row
   * skipped leaves room in the page for the rows after it: fewer than `limit` events still means the
   * log ends here.
   */
  readAllNow(after: number, limit: number): DomainEvent[] {
    const page = new EventPage(this.rows, after, limit);
    while (
      !page.take(this.rowsAfter(page.last, page.wanted, this.selectAfter(), (below) => this.archives!.rowsAfter(page.last, below, page.wanted)))
    );
    return page.events;
  }

  scanRows(after: number, limit: number, visit: (row: FoldRow) => void): Promise<number> {
    return scanInChunks(
      after,
      limit,
      SCAN_CHUNK,
      (last, size) => this.rowsAfter(last, size, this.selectFoldRows(), (below) => this.archives!.foldRowsAfter(last, below, size)),
      visit,
    );
  }

  /**
   * The live log's first seq (infinity when it has no row): what is below it is in the archives.
   * SQLite's INTEGER PRIMARY KEY makes this one step down the table's b-tree.
   */
  private liveFirst(): number {
    return this.selectLiveFirst().get() ?? Number.MAX_SAFE_INTEGER;
  }

  /** Rows with `seq > after` in seq order, at most `limit`: the archives' first when `after` is below the live log's first row. */
  private rowsAfter<R extends [number, ...unknown[]]>(
    after: number,
    limit: number,
    live: Database.Statement<[number, number, number], R>,
    archived: (below: number) => R[],
  ): R[] {
    const first = this.archives ? this.liveFirst() : 0;
    if (after >= first - 1) return live.all(after, this.durableBound(), limit);
    const rows = archived(first);
    if (rows.length >= limit) return rows;
    return rows.concat(live.all(Math.max(after, first - 1), this.durableBound(), limit - rows.length));
  }

  async readStream(stream: string, after = 0): Promise<DomainEvent[]> {
    const live = this.selectStream().all(stream, after, this.durableBound());
    // Its older versions left with an archived segment: read them there, then the live ones.
    if (this.archives && (live.length === 0 || live[0]![2] > after + 1)) {
      const archived = this.archives.streamRows(stream, after, this.liveFirst());
      if (archived.length) return this.rows.decodeAll([...archived, ...live]);
    }
    return this.rows.decodeAll(live);
  }

  async readEntity(kindAndId: string): Promise<DomainEvent[]> {
    const [kind, id] = [kindAndId.slice(0, kindAndId.indexOf(':')), kindAndId.slice(kindAndId.indexOf(':') + 1)];
    const rows =
      kind === 'run'
        ? this.selectRunMentions().all(kindAndId, id)
        : kind === 'session'
          ? this.selectSessionMentions().all(kindAndId, id)
          : this.selectEntity().all(kindAndId);
    // In seq order: those not yet durable are its last rows; the archived ones come before all of them.
    const bound = this.durableBound();
    const live = bound === Number.MAX_SAFE_INTEGER ? rows : rows.filter((row) => row[0] < bound);
    const archived = this.archives ? this.archives.entityRows(kindAndId, this.liveFirst()) : [];
    return this.rows.decodeAll(archived.length ? [...archived, ...live] : live);
  }

  async entityIdsStartingWith(kind: 'run' | 'session', prefix: string, limit: number): Promise<string[]> {
    const named = this.selectStreamIds().all(`${kind}:${prefix}`, `${kind}:${prefix}${ID_RANGE_END}`, limit);
    const mentioned = this.selectMentionedIds[kind]().all(prefix, `${prefix}${ID_RANGE_END}`, limit);
    if (!this.archives) return mergeEntityIds(kind, prefix, limit, named, mentioned);
    const archived = this.archives.entityIds(kind, prefix, ID_RANGE_END, limit, this.liveFirst());
    return mergeEntityIds(kind, prefix, limit, [...archived.named, ...named], [...archived.mentioned, ...mentioned]);
  }

  async lastOfStream(stream: string): Promise<DomainEvent | null> {
    // Backwards past any foreign rows at its end: usually one row read.
    return (
      this.rows.decodeFirst(this.selectStreamBackwards().iterate(stream, this.durableBound())) ??
      this.rows.decodeFirst(this.archives?.streamBackwards(stream, this.liveFirst()) ?? [])
    );
  }

  async streamVersion(stream: string): Promise<number> {
    const live = this.selectStreamVersion().get(stream, this.durableBound());
    if (live !== undefined || !this.archives) return live ?? 0;
    return this.archivedVersion(stream);
  }

  /**
   * The version of a stream whose rows all left the live log: the archive's, never 0 again, so an
   * append cannot reuse a version an archived row holds (the UNIQUE index sees only the live rows).
   * Read by `streamVersion` and, under the write lock, by the append's own version check.
   */
  private archivedVersion(stream: string): number {
    for (const row of this.archives?.streamBackwards(stream, this.liveFirst()) ?? []) return row[2];
    return 0;
  }

  async headSeq(): Promise<number> {
    return Math.min(this.statements.headSeq().get() ?? 0, this.durableBound() - 1);
  }

  /** The seq that reads in seq order stop before (see `undurableFrom`), as SQLite compares it. */
  private durableBound(): number {
    return Math.min(this.undurableFrom, Number.MAX_SAFE_INTEGER);
  }

  subscribe(after: number): Observable<DomainEvent> {
    return followLog((from, limit) => this.readAll(from, limit), this.wake, after);
  }

  /** Resolves once every append taken so far has committed (or failed): a reader after it sees them. */
  settle(): Promise<void> {
    return this.group.drain();
  }

  reportedEvents(options: { foreignRows?: ForeignRowPolicy } = {}): ComputerEvents | null {
    return sqliteComputerEvents(this.db, options.foreignRows);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Nothing is taken from here on; what was accepted commits now, whoever holds it back, and is
    // answered once its fsync has ended.
    this.closed = true;
    this.walBound?.stop();
    await this.group.drain();
    this.commits.complete();
    this.db.close();
    this.archives?.close();
    await this.durable?.close();
  }
}

function sqliteCheckpoints(db: Database.Database, archive: (checkpoint: Checkpoint) => void): CheckpointStore {
  const load = onFirstUse(() => db.prepare<[string], Checkpoint>('SELECT name, seq, state FROM projection_checkpoints WHERE name = ?'));
  const list = onFirstUse(() => db.prepare<[], Checkpoint>('SELECT name, seq, state FROM projection_checkpoints ORDER BY name'));
  const save = onFirstUse(() =>
    db.prepare<[string, number, string, number]>(
      `INSERT INTO projection_checkpoints (name, seq, state, saved_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET seq = excluded.seq, state = excluded.state, saved_at = excluded.saved_at
     WHERE excluded.seq >= projection_checkpoints.seq`,
    ),
  );
  return {
    load: async (name) => load().get(name) ?? null,
    list: async () => list().all(),
    // Bookkeeping, not a decision: the save time is the wall clock's.
    save: async (c) => {
      try {
        save().run(c.name, c.seq, c.state, Date.now());
        // The checkpoint is the newest snapshot; now and then one is kept as history too.
        archive(c);
      } catch (error) {
        throw asLogUnwritable(error, db.name);
      }
    },
  };
}
