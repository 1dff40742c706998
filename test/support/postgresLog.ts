import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

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
  const schema = `log_${++made}_${randomBytes(3).toString('hex')}`;
  await withClient(url, (client) => client.query(`CREATE SCHEMA "${schema}"`));
  const log = new URL(url);
  log.searchParams.set('options', `-c search_path=${schema}`);
  return log.toString();
}

/** `body` on one connection to `url`, closed after. */
export async function withClient<T>(url: string, body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
