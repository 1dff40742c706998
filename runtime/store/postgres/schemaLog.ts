import pg from 'pg';

/**
 * A fresh, empty log on the PostgreSQL server at `url`: a schema of its own, named `schema`, and the
 * URL of the log in it (its `search_path` set to the schema: the store's tables, lock and channel are
 * the schema's). Many logs then share one database, each for the cost of a `CREATE SCHEMA`.
 */
export async function createSchemaLog(url: string, schema: string): Promise<string> {
  await withClient(url, (client) => client.query(`CREATE SCHEMA "${schema}"`));
  const log = new URL(url);
  log.searchParams.set('options', `-c search_path=${schema}`);
  return log.toString();
}

/** Drops a log `createSchemaLog` made on the server at `url`, with everything in it. */
export async function dropSchemaLog(url: string, schema: string): Promise<void> {
  await withClient(url, (client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
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
