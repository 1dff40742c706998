import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import type pg from 'pg';
import { messageOf } from '../../../events/thrown.ts';
import { NotALogError } from '../sqlite/migrations.ts';

/**
 * The schema on PostgreSQL, as kysely migrations (the SQLite side's, column for column). Text columns
 * compare as bytes (`COLLATE "C"`): the id ranges of `entityIdsStartingWith` and the streams' order are
 * the same as SQLite's whatever the database's locale. `data` is the JSON text as written, never
 * normalised (jsonb would reorder keys), so a row reads back exactly as it went in.
 */
const migrations: Record<string, Migration> = {
  '0001_events': {
    async up(db: Kysely<unknown>) {
      // `tx`: the transaction that wrote the row (pg_current_xact_id), for who looks at the log; the
      // order readers follow is `seq`, handed out under the write lock (see pgAppend.ts).
      await sql`CREATE TABLE events (
        seq bigint PRIMARY KEY,
        stream text COLLATE "C" NOT NULL,
        version integer NOT NULL,
        type text COLLATE "C" NOT NULL,
        data text NOT NULL,
        at bigint NOT NULL,
        cause bigint,
        actor text NOT NULL,
        tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
        CONSTRAINT events_stream_version UNIQUE (stream, version)
      )`.execute(db);
      await sql`CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'events is append-only: rows are never %', CASE TG_OP WHEN 'UPDATE' THEN 'updated' ELSE 'deleted' END; END $$`.execute(
        db,
      );
      await sql`CREATE TRIGGER events_no_update_or_delete BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION events_append_only()`.execute(
        db,
      );
      await sql`CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION events_append_only()`.execute(db);
    },
  },
  '0002_projection_checkpoints': {
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE projection_checkpoints (
        name text COLLATE "C" PRIMARY KEY,
        seq bigint NOT NULL,
        state text NOT NULL,
        saved_at bigint NOT NULL
      )`.execute(db);
    },
  },
  '0003_events_stream_id': {
    // One entity (`run:<id>`) across its owners (`run:<id>`, `c1/run:<id>`), in seq order, by index.
    async up(db: Kysely<unknown>) {
      await sql`CREATE INDEX events_stream_id ON events ((substr(stream, strpos(stream, '/') + 1)), seq)`.execute(db);
    },
  },
  '0004_events_mentions': {
    // Every event whose data names a run or a session (a run's queue decisions live in its lane's stream).
    async up(db: Kysely<unknown>) {
      await sql`CREATE INDEX events_run_id ON events (((data::json ->> 'runId') COLLATE "C"), seq) WHERE (data::json ->> 'runId') IS NOT NULL`.execute(
        db,
      );
      await sql`CREATE INDEX events_session_id ON events (((data::json ->> 'sessionId') COLLATE "C"), seq) WHERE (data::json ->> 'sessionId') IS NOT NULL`.execute(
        db,
      );
    },
  },
  '0005_projection_snapshots': {
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE projection_snapshots (
        name text COLLATE "C" NOT NULL,
        seq bigint NOT NULL,
        state text NOT NULL,
        saved_at bigint NOT NULL,
        CONSTRAINT projection_snapshots_name_seq UNIQUE (name, seq)
      )`.execute(db);
    },
  },
  '0006_board_secrets': {
    // The secret run tokens are derived from, shared by every board on the database (a run claimed
    // through one board heartbeats through another), where a SQLite board keeps its file beside the log.
    // A table of its own: never an event, so never in the log, its replays or its copies.
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE board_secrets (name text COLLATE "C" PRIMARY KEY, value text NOT NULL)`.execute(db);
    },
  },
  '0007_board_leases': {
    // What several boards on one database share that is no event (docs/rules.md#postgresql-board): tables of their own, never in
    // the log (which grows with decisions, not with time), rewritten in place.
    async up(db: Kysely<unknown>) {
      // The chores that must be done once: whoever holds the row (unexpired) does them; `epoch` grows at
      // each change of holder, and a chore's append is checked against it in its transaction (pgAppend.ts).
      await sql`CREATE TABLE board_leases (
        name text COLLATE "C" PRIMARY KEY,
        holder text COLLATE "C" NOT NULL,
        epoch bigint NOT NULL,
        expires_at timestamptz NOT NULL
      )`.execute(db);
      // A row per board process alive (its identity): the computers whose push streams it holds, and when
      // it last said so; the lease holder records a board's computers disconnected once its row is stale.
      await sql`CREATE TABLE board_processes (
        identity text COLLATE "C" PRIMARY KEY,
        computers text[] NOT NULL,
        beat_at timestamptz NOT NULL
      )`.execute(db);
      // The last heartbeat of each open run, whichever board it reached, for the reaper (the lease holder).
      await sql`CREATE TABLE run_heartbeats (run_id text COLLATE "C" PRIMARY KEY, at bigint NOT NULL)`.execute(db);
    },
  },
  '0008_computer_events': {
    // What computers with logs of their own report to their board (ComputerEvents): kept apart from
    // `events`, never read by replay or the folds. `position` is handed out under a lock of its own
    // (pgComputerEvents.ts), so it grows in commit order and a reader following it skips none.
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE computer_events (
        position bigserial PRIMARY KEY,
        computer text COLLATE "C" NOT NULL,
        seq bigint NOT NULL,
        stream text COLLATE "C" NOT NULL,
        version integer NOT NULL,
        type text COLLATE "C" NOT NULL,
        data text NOT NULL,
        at bigint NOT NULL,
        cause bigint,
        actor text NOT NULL,
        entity text COLLATE "C" NOT NULL,
        mentions text COLLATE "C",
        CONSTRAINT computer_events_computer_seq UNIQUE (computer, seq)
      )`.execute(db);
      await sql`CREATE INDEX computer_events_entity ON computer_events (entity, computer)`.execute(db);
      await sql`CREATE INDEX computer_events_mentions ON computer_events (mentions) WHERE mentions IS NOT NULL`.execute(db);
      await sql`CREATE TABLE computer_reports (computer text COLLATE "C" PRIMARY KEY, through bigint NOT NULL)`.execute(db);
    },
  },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * kysely's Migrator takes an advisory lock: boards starting at once on one database migrate it once.
 * Its bookkeeping lives in the log's schema (`schema`, named: kysely would otherwise take another
 * schema's tables of the same name for its own).
 */
export async function migrateToLatest<DB>(db: Kysely<DB>, schema: string): Promise<void> {
  const { error, results } = await new Migrator({ db, provider, migrationTableSchema: schema }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const why = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`could not bring the log's schema up to date${failed ? ` (${failed.migrationName})` : ''}: ${why}`);
  }
}

const EVENT_COLUMNS = ['seq', 'stream', 'version', 'type', 'data', 'at', 'cause', 'actor'];

/**
 * Refuses, before anything is read or written, a database (schema) that holds no runledger log or one
 * whose schema is newer than this version knows; an older one passes with `older: 'fine'` (about to be
 * migrated), and a read-only tool is told what to do. `where` names it (the URL without its password).
 */
export async function checkLogSchema(client: pg.ClientBase, where: string, { older }: { older: 'fine' | 'refused' }): Promise<void> {
  let columns: string[];
  let applied: string[];
  try {
    const found = await client.query<{ name: string }>(
      `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'events'`,
    );
    columns = found.rows.map((r) => r.name);
    const bookkept = await client.query(
      `SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'kysely_migration'`,
    );
    applied = bookkept.rowCount
      ? (await client.query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name')).rows.map((r) => r.name)
      : [];
  } catch (error) {
    throw new NotALogError(where, `it cannot be read (${messageOf(error)})`);
  }
  const missing = EVENT_COLUMNS.filter((c) => !columns.includes(c));
  if (missing.length) {
    throw new NotALogError(
      where,
      columns.length
        ? `its events table lacks ${missing.join(', ')}`
        : 'it has no events table (is --db the right database? runledger server creates it)',
    );
  }
  const unknown = applied.filter((name) => !Object.hasOwn(migrations, name));
  if (unknown.length)
    throw new NotALogError(where, `its schema is newer than this runledger knows (${unknown.join(', ')}): use the runledger that wrote it`);
  const behind = Object.keys(migrations).filter((name) => !applied.includes(name));
  if (behind.length && older === 'refused') {
    throw new NotALogError(
      where,
      `its schema is older (it lacks ${behind.join(', ')}) and a read-only tool does not bring it forward: start runledger server on it once`,
    );
  }
}
