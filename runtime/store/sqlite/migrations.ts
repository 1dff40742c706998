import type Database from 'better-sqlite3';
import type { Kysely, Migration } from 'kysely';
import { messageOf } from '../../../events/thrown.ts';

/** kysely, loaded only when a migration is to run: a read-only tool, or a log already up to date, never parses it (~440 KB). */
type KyselyModule = typeof import('./migrator.ts');

/** A migration's step, given kysely (its `sql` tag) by who loaded it. */
interface Step {
  up(db: Kysely<unknown>, kysely: KyselyModule): Promise<void>;
}

/**
 * The schema, as kysely migrations: a file made by an older runledger is brought forward on open.
 * `events` is exactly docs/rules.md#the-log's table; triggers make it append-only for every writer,
 * the stock `sqlite3` shell included.
 */
const migrations: Record<string, Step> = {
  '0001_events': {
    async up(db: Kysely<unknown>, { sql }) {
      await db.schema
        .createTable('events')
        .addColumn('seq', 'integer', (c) => c.primaryKey())
        .addColumn('stream', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('at', 'integer', (c) => c.notNull())
        .addColumn('cause', 'integer')
        .addColumn('actor', 'text', (c) => c.notNull())
        .addUniqueConstraint('events_stream_version', ['stream', 'version'])
        .execute();
      await sql`CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'events is append-only: rows are never updated'); END`.execute(db);
      await sql`CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'events is append-only: rows are never deleted'); END`.execute(db);
    },
  },
  '0002_projection_checkpoints': {
    async up(db: Kysely<unknown>, { sql }) {
      await db.schema
        .createTable('projection_checkpoints')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('saved_at', 'integer', (c) => c.notNull().defaultTo(sql`(unixepoch() * 1000)`))
        .execute();
    },
  },
  '0003_events_stream_id': {
    // `runledger audit` reads one entity (`run:<id>`) across its owners (the board's `run:<id>`, each
    // computer's `c1/run:<id>`): an index on the stream name after its owner prefix finds them
    // without a scan of the whole log. Index entries of one key are in rowid (= seq) order.
    async up(db: Kysely<unknown>, { sql }) {
      await db.schema.createIndex('events_stream_id').on('events').expression(sql`substr(stream, instr(stream, '/') + 1)`).execute();
    },
  },
  '0004_events_mentions': {
    // A run's queue decisions live in its lane's stream, a session's close in the session's: the audit
    // of one run or session also finds every event whose data names it, through these partial indexes.
    async up(db: Kysely<unknown>, { sql }) {
      await sql`CREATE INDEX events_run_id ON events (json_extract(data, '$.runId')) WHERE json_extract(data, '$.runId') IS NOT NULL`.execute(db);
      await sql`CREATE INDEX events_session_id ON events (json_extract(data, '$.sessionId')) WHERE json_extract(data, '$.sessionId') IS NOT NULL`.execute(
        db,
      );
    },
  },
  '0005_projection_snapshots': {
    // A checkpoint is the newest state of a projection; these are older ones, kept at intervals of the
    // log, so a fold as of any seq (`replay --until`, the replay of one run) starts near it, not at 0.
    // A rowid table: states are large, and a WITHOUT ROWID table would carry them in its index pages.
    async up(db: Kysely<unknown>, { sql }) {
      await db.schema
        .createTable('projection_snapshots')
        .ifNotExists()
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('saved_at', 'integer', (c) => c.notNull().defaultTo(sql`(unixepoch() * 1000)`))
        .addUniqueConstraint('projection_snapshots_name_seq', ['name', 'seq'])
        .execute();
    },
  },
  '0006_events_archived_prefix': {
    // Retention (docs/retention.md): a whole prefix of rows may leave the live log once it is sealed in
    // an archive segment and a `log.archived` row records it; every other delete is still refused. The
    // partial index makes the trigger's look-up of the latest record one step, not a scan.
    async up(db: Kysely<unknown>, { sql }) {
      await sql`CREATE INDEX IF NOT EXISTS events_archived ON events (seq) WHERE type = 'log.archived'`.execute(db);
      await sql`DROP TRIGGER IF EXISTS events_no_delete`.execute(db);
      await sql`CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        WHEN OLD.seq > coalesce((SELECT json_extract(data, '$.to') FROM events WHERE type = 'log.archived' ORDER BY seq DESC LIMIT 1), 0)
        BEGIN SELECT RAISE(ABORT, 'events is append-only: rows are never deleted, except a prefix recorded as archived'); END`.execute(db);
    },
  },
  '0007_starting_checkpoint': {
    // Retention (docs/retention.md#starting-checkpoints): the state of every fold (each projection, and
    // each decider's states) just before a segment's first event, and before the live log's first one
    // after a cut, so that either is replayed and read on its own. Each row names its fold's version:
    // a fold whose meaning changed since is told apart, never started from a state of another shape.
    // The state is its JSON, deflated (raw DEFLATE).
    async up(db: Kysely<unknown>, { sql }) {
      await sql`CREATE TABLE IF NOT EXISTS starting_checkpoint (
        name TEXT NOT NULL, version INTEGER NOT NULL, seq INTEGER NOT NULL, state BLOB NOT NULL,
        PRIMARY KEY (name, seq))`.execute(db);
    },
  },
};

/**
 * Migrations a read-only tool does without: those that change only how the log is written (a trigger
 * guarding deletes, the index it uses), and the starting checkpoint, read as none where its table is
 * not. A reader reads a log without them as well as with them, so it does not ask for them (it may not
 * bring a file forward, and every log written before them would be refused).
 */
const WRITES_ONLY = new Set(['0006_events_archived_prefix', '0007_starting_checkpoint']);

/** Brings the schema of the SQLite file `database` up to this version's, through kysely's Migrator. */
export async function migrateToLatest(database: Database.Database): Promise<void> {
  if (isUpToDate(database)) return;
  const kysely = await import('./migrator.ts');
  const steps = Object.fromEntries(
    Object.entries(migrations).map(([name, step]): [string, Migration] => [name, { up: (db) => step.up(db as Kysely<unknown>, kysely) }]),
  );
  const db = new kysely.Kysely<unknown>({ dialect: new kysely.SqliteDialect({ database }) });
  const { error, results } = await new kysely.Migrator({ db, provider: { getMigrations: async () => steps } }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const why = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`could not bring the log's schema up to date${failed ? ` (${failed.migrationName})` : ''}: ${why}`);
  }
}

/**
 * Whether every migration this version knows is recorded as applied, and no other: then kysely's
 * Migrator would find nothing to do (it only takes and frees its lock), so it is not loaded at all.
 */
function isUpToDate(database: Database.Database): boolean {
  const applied = appliedMigrations(database);
  const known = Object.keys(migrations).sort();
  return applied.length === known.length && applied.every((name, i) => name === known[i]);
}

/** The names of the migrations recorded in `db` (kysely's bookkeeping table), in order; none without that table. */
function appliedMigrations(db: Database.Database): string[] {
  const bookkept = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'").pluck().get() !== undefined;
  return bookkept ? db.prepare<[], string>('SELECT name FROM kysely_migration ORDER BY name').pluck().all() : [];
}

/** The columns of docs/rules.md#the-log's `events` table: a file without them all is not a runledger log. */
const EVENT_COLUMNS = ['seq', 'stream', 'version', 'type', 'data', 'at', 'cause', 'actor'];

/** A file given as a log that is none this version can read: names the file and why. */
export class NotALogError extends Error {
  override readonly name = 'NotALogError';
  constructor(
    readonly path: string,
    readonly why: string,
    message = `${path} is not a runledger log this version can read: ${why}`,
  ) {
    super(message);
  }

  static missing(path: string): NotALogError {
    return new NotALogError(path, 'no such file', `there is no log at ${path}: give its file with --db FILE`);
  }
}

/**
 * Refuses, before anything is read or written, a file that is not a runledger log (another program's
 * SQLite file, or no SQLite file at all) or whose schema is newer than this version knows. One whose
 * schema is older passes with `older: 'fine'` (it is about to be migrated); a reader that may not
 * migrate is told what to do.
 */
export function checkLogSchema(db: Database.Database, path: string, { older }: { older: 'fine' | 'refused' }): void {
  let columns: string[];
  let applied: string[];
  try {
    columns = db.prepare<[], string>("SELECT name FROM pragma_table_info('events')").pluck().all();
    applied = appliedMigrations(db);
  } catch (error) {
    throw new NotALogError(path, `it cannot be read as SQLite (${messageOf(error)})`);
  }
  const missing = EVENT_COLUMNS.filter((c) => !columns.includes(c));
  if (missing.length) {
    throw new NotALogError(
      path,
      columns.length ? `its events table lacks ${missing.join(', ')}` : 'it has no events table (is --db the right file?)',
    );
  }
  const unknown = applied.filter((name) => !Object.hasOwn(migrations, name));
  if (unknown.length)
    throw new NotALogError(path, `its schema is newer than this runledger knows (${unknown.join(', ')}): use the runledger that wrote it`);
  const behind = Object.keys(migrations).filter((name) => !applied.includes(name) && !WRITES_ONLY.has(name));
  if (behind.length && older === 'refused') {
    throw new NotALogError(
      path,
      `its schema is older (it lacks ${behind.join(', ')}) and a read-only tool does not bring it forward: start runledger daemon on it once`,
    );
  }
}
