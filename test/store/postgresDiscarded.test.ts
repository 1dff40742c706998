/**
 * A connection the store discards after a failed transaction (the server gone mid-transaction) may
 * still report its socket's failure afterwards: that 'error' is heard, never thrown at the process
 * (a board on PostgreSQL ended once, under load, as its server went away).
 */
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { expect, it } from 'vitest';
import { bumped } from '../support/events.ts';
import { withClient } from '../support/postgresLog.ts';
import { postgresKind } from '../support/storeKinds.ts';

it('given a transaction whose statement fails, when its discarded connection reports an error afterwards, then nothing is thrown', async () => {
  const store = await postgresKind.open(await postgresKind.fresh());
  const client = Object.assign(new EventEmitter(), {
    released: null as boolean | null,
    release(destroy?: boolean) {
      this.released = destroy === true;
    },
  });
  const pool = { connect: async () => client } as unknown as pg.Pool;
  const transaction = (store as unknown as { transaction(p: pg.Pool, body: () => Promise<unknown>): Promise<unknown> }).transaction.bind(store);

  await expect(transaction(pool, async () => Promise.reject(new Error('Connection terminated unexpectedly')))).rejects.toThrow();
  expect(client.released).toBe(true);
  // EventEmitter throws an 'error' nobody listens to.
  expect(() => client.emit('error', new Error('read ECONNRESET'))).not.toThrow();
});

it('given a store, when the server ends every connection it holds idle (an administrator, a restart, a proxy), then nothing is thrown at the process and the next append and read go through', async () => {
  const url = await postgresKind.fresh();
  const store = await postgresKind.open(url);
  await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
  expect(await store.readAll(0, 10)).toHaveLength(1);

  // Its own connections only: the cluster serves the other test files' stores too.
  const pids: number[] = [];
  for (const pool of ['pool', 'appends'].map((name) => (store as unknown as Record<string, pg.Pool>)[name]!)) {
    const client = await pool.connect();
    pids.push((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    client.release();
  }
  await withClient(url, (admin) => admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]));
  // Each ended connection reports it as an 'error' of its pool: heard, not thrown.
  await new Promise((resolve) => setTimeout(resolve, 300));

  await store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)] });
  expect((await store.readAll(0, 10)).map((e) => e.version)).toEqual([1, 2]);
});

it("given a connection taken from the store's pool by code that does not listen to it (kysely's migrations), when the server ends it, then nothing is thrown at the process", async () => {
  const url = await postgresKind.fresh();
  const store = await postgresKind.open(url);
  const pool = (store as unknown as { pool: pg.Pool }).pool;
  const client = await pool.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await withClient(url, (admin) => admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]));
  await new Promise((resolve) => setTimeout(resolve, 300));
  client.release(true);
  expect(await store.readAll(0, 10)).toEqual([]);
});
