import type { OpenedLog } from '../eventStore.ts';
import { isPostgresUrl } from '../logLocation.ts';
import type { PostgresStoreOptions } from '../postgres/postgresEventStore.ts';
import { openSqliteStore, openSqliteStoreToRead, type SqliteStoreOptions } from '../sqlite/sqliteEventStore.ts';

/** What both stores take; `sync` is SQLite's (PostgreSQL's durability is the server's `synchronous_commit`). */
export type StoreOptions = Omit<SqliteStoreOptions, 'faults'> & Omit<PostgresStoreOptions, 'faults'> & { existing?: boolean };

/**
 * The log at `db`: a `postgres://` (or `postgresql://`) URL opens the PostgreSQL store, anything else
 * is a SQLite file. Everything past this line sees only the EventStore and LogQueries interfaces.
 */
export async function openStore(db: string, options: StoreOptions = {}): Promise<OpenedLog> {
  if (isPostgresUrl(db)) {
    const { sync: _sync, ...rest } = options;
    return (await postgresStore()).openPostgresStore(db, rest);
  }
  return openSqliteStore(db, options);
}

/** The log at `db` only to read it (`replay`, `rebuild`, `audit`): nothing created, migrated or written. */
export async function openStoreToRead(db: string, options: Omit<StoreOptions, 'sync' | 'existing'> = {}): Promise<OpenedLog> {
  return isPostgresUrl(db) ? (await postgresStore()).openPostgresStoreToRead(db, options) : openSqliteStoreToRead(db, options);
}

/**
 * The PostgreSQL store, loaded only for a log that is one: `pg` and its modules cost every command
 * on a SQLite file about 30 ms of CPU at start (a CPU profile of `runledger daemon`), for nothing.
 */
function postgresStore(): Promise<typeof import('../postgres/postgresEventStore.ts')> {
  return import('../postgres/postgresEventStore.ts');
}
