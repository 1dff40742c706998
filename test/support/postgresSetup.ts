import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startPostgresCluster, stopOnExit } from './postgresCluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The PostgreSQL server of this run (a maintenance database URL), and the prefix of the databases the run creates on it. */
    postgres: { url: string; prefix: string };
  }
}

/**
 * vitest's global setup: one throwaway PostgreSQL cluster for the whole run (about a second), or the
 * server `RUNLEDGER_TEST_PG_URL` names. Each test file makes its databases on it (test/support/
 * postgresLog.ts) under this run's prefix; the teardown drops them, and stops and removes the cluster.
 * A cluster left by a run that was killed is stopped by the next run (see startPostgresCluster).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.RUNLEDGER_TEST_PG_URL;
  const cluster = given ? null : await startPostgresCluster();
  const url = given ?? cluster!.url;
  const prefix = `runledger_test_${randomBytes(4).toString('hex')}_`;
  project.provide('postgres', { url, prefix });
  const undo = cluster ? stopOnExit(cluster) : () => undefined;
  return async () => {
    undo();
    if (cluster) return cluster.stop();
    await dropDatabases(url, prefix);
  };
}

/** On a server the run did not start, the databases it made are dropped (their connections closed first). */
async function dropDatabases(url: string, prefix: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const made = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix]);
    for (const { datname } of made.rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
