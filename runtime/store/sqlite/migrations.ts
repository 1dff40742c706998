import type Database from 'better-sqlite3';
import type { Migration } from 'kysely';
import { messageOf } from '../../../events/thrown.ts';

/**
 * The schema, as migrations: a file made by an older runledger is brought forward on open. Each is
 * its statements, spelled as kysely's schema builder spelled them when it wrote them (SQLite keeps a
 * CREATE's text as given, and `sqlite3 FILE .schema` shows it): every log, made by any version, has
 * the same schema text. `events` is exactly docs/rules.md#the-log's table; triggers make it
 * append-only for every writer, the stock `sqlite3` shell included.
 */
const migrations: Record<string, readonly string[]> = {
  '0001_events': [
    'create table "events" ("seq" integer primary key, "stream" text not null, "version" integer not null, "type" text not null, "data" text not null, "at" integer not null, "cause" integer, "actor" text not null, constraint "events_stream_version" unique ("stream", "version"))',
    `CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'events is append-only: rows are never updated'); END`,
    `CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'events is append-only: rows are never deleted'); END`,
  ],
  '0002_projection_checkpoints': [
    'create table "projection_checkpoints" ("name" text primary key, "seq" integer not null, "state" text not null, "saved_at" integer default (unixepoch() * 1000) not null)',
  ],
  // `runledger audit` reads one entity (`run:<id>`) across its owners (the board's `run:<id>`, each
  // computer's `c1/run:<id>`): an index on the stream name after its owner prefix finds them
  // without a scan of the whole log. Index entries of one key are in rowid (= seq) order.
  '0003_events_stream_id': [`create index "events_stream_id" on "events" (substr(stream, instr(stream, '/') + 1))`],
  // A run's queue decisions live in its lane's stream, a session's close in the session's: the audit
  // of one run or session also finds every event whose data names it, through these partial indexes.
  '0004_events_mentions': [
    `CREATE INDEX events_run_id ON events (json_extract(data, '$.runId')) WHERE json_extract(data, '$.runId') IS NOT NULL`,
    `CREATE INDEX events_session_id ON events (json_extract(data, '$.sessionId')) WHERE json_extract(data, '$.sessionId') IS NOT NULL`,
  ],
  // A checkpoint is the newest state of a projection; these are older ones, kept at intervals of the
  // log, so a fold as of any seq (`replay --until`, the replay of one run) starts near it, not at 0.
  // A rowid table: states are large, and a WITHOUT ROWID table would carry them in its index pages.
  '0005_projection_snapshots': [
    'create table if not exists "projection_snapshots" ("name" text not null, "seq" integer not null, "state" text not null, "saved_at" integer default (unixepoch() * 1000) not null, constraint "projection_snapshots_name_seq" unique ("name", "seq"))',
  ],
  // Retention (docs/retention.md): a whole prefix of rows may leave the live log once it is sealed in
  // an archive segment and a `log.archived` row records it; every other delete is still refused. The
  // partial index makes the trigger's look-up of the latest record one step, not a scan.
  '0006_events_archived_prefix': [
    `CREATE INDEX IF NOT EXISTS events_archived ON events (seq) WHERE type = 'log.archived'`,
    'DROP TRIGGER IF EXISTS events_no_delete',
    `CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        WHEN OLD.seq > coalesce((SELECT json_extract(data, '$.to') FROM events WHERE type = 'log.archived' ORDER BY seq DESC LIMIT 1), 0)
        BEGIN SELECT RAISE(ABORT, 'events is append-only: rows are never deleted, except a prefix recorded as archived'); END`,
  ],
  // Retention (docs/retention.md#starting-checkpoints): the state of every fold (each projection, and
  // each decider's states) just before a segment's first event, and before the live log's first one
  // after a cut, so that either is replayed and read on its own. Each row names its fold's version:
  // a fold whose meaning changed since is told apart, never started from a state of another shape.
  // The state is its JSON, deflated (raw DEFLATE).
  '0007_starting_checkpoint': [
    `CREATE TABLE IF NOT EXISTS starting_checkpoint (
        name TEXT NOT NULL, version INTEGER NOT NULL, seq INTEGER NOT NULL, state BLOB NOT NULL,
        PRIMARY KEY (name, seq))`,
  ],
};

/**
 * Migrations a read-only tool does without: those that change only how the log is written (a trigger
 * guarding deletes, the index it uses), and the starting checkpoint, read as none where its table is
 * not. A reader reads a log without them as well as with them, so it does not ask for them (it may not
 * bring a file forward, and every log written before them would be refused).
 */
const WRITES_ONLY = new Set(['0006_events_archived_prefix', '0007_starting_checkpoint']);

/** Brings the schema of the SQLite file `database` up to this version's. */
export async function migrateToLatest(database: Database.Database): Promise<void> {
  if (isUpToDate(database) || createdWhole(database)) return;
  await migrateThroughKysely(database);
}

/**
 * kysely's Migrator, loaded only when an older log is to be brought forward: a new file, a read-only
 * tool, or a log already up to date never parses it (~440 KB). Exported for the test that holds it
 * and createdWhole() to the same schema.
 */
export async function migrateThroughKysely(database: Database.Database): Promise<void> {
  const kysely = await import('./migrator.ts');
  const steps = Object.fromEntries(
    Object.entries(migrations).map(([name, statements]): [string, Migration] => [
      name,
      {
        async up(db) {
          for (const statement of statements) await kysely.sql.raw(statement).execute(db);
        },
      },
    ]),
  );
  const db = new kysely.Kysely<unknown>({ dialect: new kysely.SqliteDialect({ database }) });
  const { error, results } = await new kysely.Migrator({ db, provider: { getMigrations: async () => steps } }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) throw notUpToDate(error, failed?.migrationName);
}

/** What a failed migration is said as, whichever way it ran: the migration it was in, if it was in one. */
function notUpToDate(error: unknown, migration: string | undefined): Error {
  const why = error instanceof Error ? error.message : String(error ?? 'unknown error');
  return new Error(`could not bring the log's schema up to date${migration ? ` (${migration})` : ''}: ${why}`);
}

/**
 * A file with nothing in it yet (a new log, a new archive segment) is given the whole schema and the
 * bookkeeping kysely's Migrator would have written, statement for statement (its tables, its lock row,
 * a row per migration with the time it ran), in one transaction: kysely's introspection of the file,
 * around each of its steps, was most of a new log's start (~45 ms of CPU, and ~440 KB of it parsed).
 * test/store/newLogSchema.test.ts holds the two ways to the same schema and rows. False, writing
 * nothing, when the file holds anything (another process may have just made it): kysely takes it.
 */
function createdWhole(database: Database.Database): boolean {
  // The migration being applied, for the failure's words, as kysely's would have said them.
  let migration: string | undefined;
  try {
    return database
      .transaction(() => {
        if (database.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get() !== undefined) return false;
        database.exec('create table if not exists "kysely_migration" ("name" varchar(255) not null primary key, "timestamp" varchar(255) not null)');
        database.exec(
          'create table if not exists "kysely_migration_lock" ("id" varchar(255) not null primary key, "is_locked" integer default 0 not null)',
        );
        database.exec(`insert into "kysely_migration_lock" ("id", "is_locked") values ('migration_lock', 0.0)`);
        const applied = database.prepare<[string, string]>('insert into "kysely_migration" ("name", "timestamp") values (?, ?)');
        for (const name of Object.keys(migrations).sort()) {
          migration = name;
          for (const statement of migrations[name]!) database.exec(statement);
          applied.run(name, new Date().toISOString());
        }
        return true;
      })
      .immediate();
  } catch (error) {
    throw notUpToDate(error, migration);
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
