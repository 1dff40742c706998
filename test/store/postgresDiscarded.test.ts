/**
 * A connection the store discards after a failed transaction (the server gone mid-transaction) may
 * still report its socket's failure afterwards: that 'error' is heard, never thrown at the process
 * (a board on PostgreSQL ended once, under load, as its server went away).
 */
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { expect, it } from 'vitest';
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
