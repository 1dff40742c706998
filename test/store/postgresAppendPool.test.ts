import { describe, expect, it, onTestFinished } from 'vitest';
import { appendOrThrow } from '../../runtime/store/eventStore.ts';
import { openPostgresStore } from '../../runtime/store/postgres/postgresEventStore.ts';
import { counterCodec } from '../fixtures/counter/counterEvents.ts';
import { bumped } from '../support/events.ts';
import { freshPostgresLog, withClient } from '../support/postgresLog.ts';

/** A promise's value, or `timedOut` once `ms` have passed on the real clock (a bound, never a sleep for correctness). */
function within<T>(ms: number, promise: Promise<T>): Promise<T | 'timedOut'> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<'timedOut'>((resolve) => (timer = setTimeout(() => resolve('timedOut'), ms)));
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

describe('appends on PostgreSQL while reads hold every read connection', () => {
  it('commit on a connection of their own, without waiting for a read to end', async () => {
    const url = await freshPostgresLog();
    const store = await openPostgresStore(url, { codec: counterCodec });
    onTestFinished(() => store.close());
    await store.boardSecret();

    // Another session locks a table reads go through and appends never touch: every read waits on it,
    // holding its pooled connection, as a burst of slow reads (status, the web view, a replay) would.
    const pg = await import('pg');
    const locker = new pg.default.Client({ connectionString: url });
    await locker.connect();
    onTestFinished(() => locker.end());
    await locker.query('BEGIN; LOCK TABLE board_secrets IN ACCESS EXCLUSIVE MODE');
    const reads = Array.from({ length: 12 }, () => store.boardSecret());
    // Bounded: until the server shows the store's reads waiting on the lock, a pool's worth of them.
    let waiting = 0;
    for (let poll = 0; poll < 200 && waiting < 6; poll++) {
      waiting = await withClient(url, async (client) =>
        Number(
          (
            await client.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'runledger' AND wait_event_type = 'Lock' AND datname = current_database()`,
            )
          ).rows[0]!.n,
        ),
      );
      if (waiting < 6) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(waiting).toBeGreaterThanOrEqual(6);

    const committed = await within(3_000, appendOrThrow(store, { expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] }));

    await locker.query('ROLLBACK');
    await Promise.all(reads);
    expect(committed).not.toBe('timedOut');
    expect((await store.readStream('counter:a')).map((e) => e.type)).toEqual(['counter.bumped']);
  });
});
