import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createSchemaLog, withClient } from '../../runtime/store/postgres/schemaLog.ts';

/** One connection to a URL for a test's own query: the store's helper. */
export { withClient };

/**
 * Fresh PostgreSQL logs for a test file: one database per file (made on first use; the run's teardown
 * drops them, with the cluster), and in it one schema per log, so a log costs a `CREATE SCHEMA` and its migrations, not a
 * database. A log's URL sets its `search_path`: the store's tables, lock and channel are the schema's.
 */
let database: Promise<string> | null = null;
let made = 0;

function fileDatabase(): Promise<string> {
  if (database) return database;
  const { url, prefix } = inject('postgres');
  const name = `${prefix}${randomBytes(4).toString('hex')}`;
  database = (async () => {
    await withClient(url, (client) => client.query(`CREATE DATABASE "${name}"`));
    return withDatabase(url, name);
  })();
  return database;
}

/** The URL of a new, empty log (a schema of its own in this file's database). */
export async function freshPostgresLog(): Promise<string> {
  const url = await fileDatabase();
  return createSchemaLog(url, `log_${++made}_${randomBytes(3).toString('hex')}`);
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** A row of a PostgreSQL log as the end-to-end tests read it: its data parsed. */
export interface PostgresLogRow {
  readonly seq: number;
  readonly stream: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly at: number;
}

/** Every row of the log at `url`, in seq order. */
export const postgresLogRows = (url: string): Promise<PostgresLogRow[]> =>
  withClient(url, async (client) =>
    (
      await client.query<{ seq: string; stream: string; type: string; data: string; at: string }>(
        'SELECT seq, stream, type, data, at FROM events ORDER BY seq',
      )
    ).rows.map((r) => ({
      seq: Number(r.seq),
      stream: r.stream,
      type: r.type,
      data: JSON.parse(r.data) as Record<string, unknown>,
      at: Number(r.at),
    })),
  );
