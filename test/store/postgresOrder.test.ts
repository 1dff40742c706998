import { describe, expect, it } from 'vitest';
import { AppendChain, type EventStore } from '../../runtime/store/eventStore.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import type { PgStoreFaults } from '../../runtime/store/postgres/pgAppend.ts';
import { openPostgresStore, openPostgresStoreToRead } from '../../runtime/store/postgres/postgresEventStore.ts';
import { NotALogError } from '../../runtime/store/sqlite/migrations.ts';
import { counterCodec } from '../fixtures/counter/counterEvents.ts';
import { bumped, oneTo } from '../support/events.ts';
import { record } from '../support/observe.ts';
import { freshPostgresLog, withClient } from '../support/postgresLog.ts';
import { postgresKind } from '../support/storeKinds.ts';

/** A store whose every append transaction waits, its rows written and the write lock held, until `release` is called. */
async function heldWriter(url: string, options: { idleInTransactionMs?: number } = {}) {
  let release: () => void = () => undefined;
  let held: () => void = () => undefined;
  const isHeld = new Promise<void>((resolve) => {
    held = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const faults: PgStoreFaults = {
    beforeCommit: async () => {
      held();
      await gate;
    },
  };
  const store = await openPostgresStore(url, { codec: counterCodec, faults, ...options });
  return { store, isHeld, release, close: () => store.close() };
}

/**
 * A pg_locks row of the advisory lock the appends of the log on the search_path take (its key, as the
 * store derives it: postgresEventStore's SQL.identity), held by another session. A bigint key is kept
 * as its high and low 32 bits, `classid` and `objid`, with `objsubid` 1.
 */
const HOLDS_THIS_LOGS_LOCK = `locktype = 'advisory' AND objsubid = 1 AND granted AND pid <> pg_backend_pid()
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(current_schema() || '/runledger.events', 0)`;

async function until(what: string, ms: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const settled = (promise: Promise<unknown>) =>
  Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 200))]);

describe('PostgreSQL: the global order subscribers follow', () => {
  it('given a transaction holding its commit, when a later one tries to commit past it, then it waits, and a subscriber sees both in seq order, the lower one not missed', async () => {
    const url = await freshPostgresLog();
    const slow = await heldWriter(url);
    const fast = await postgresKind.open(url);
    const watcher = await postgresKind.open(url, { pollMs: 5 });
    const seen = record(watcher.subscribe(0));

    const lower = slow.store.append({ expected: { 'counter:slow': 0 }, events: [bumped('counter:slow', 1)] });
    await slow.isHeld;
    const higher = fast.append({ expected: { 'counter:fast': 0 }, events: [bumped('counter:fast', 2)] });

    // A bigserial read by position would let `higher` commit seq 2 now, and a subscriber reading past it
    // would never see seq 1: here `higher` cannot even take a seq before `lower` commits.
    expect(await settled(higher)).toBe(false);
    expect(seen.items).toEqual([]);
    slow.release();
    const [a, b] = await Promise.all([lower, higher]);
    const events = await seen.untilCount(2);

    expect(a).toMatchObject({ ok: true, events: [{ seq: 1, stream: 'counter:slow' }] });
    expect(b).toMatchObject({ ok: true, events: [{ seq: 2, stream: 'counter:fast' }] });
    expect(events.map((e) => [e.seq, e.stream])).toEqual([
      [1, 'counter:slow'],
      [2, 'counter:fast'],
    ]);
    await slow.close();
  });

  it('given three stores committing at once with commits of random length, then a subscriber on a fourth sees every seq once, in order, with no gap', async () => {
    const url = await freshPostgresLog();
    let draw = 7;
    const random = () => {
      draw = (draw * 1103515245 + 12345) % 2 ** 31;
      return draw % 4;
    };
    const writers: EventStore[] = [];
    for (let w = 0; w < 3; w++) {
      const faults: PgStoreFaults = { beforeCommit: () => new Promise((resolve) => setTimeout(resolve, random())) };
      const store = await openPostgresStore(url, { codec: counterCodec, faults });
      writers.push(store);
    }
    const watcher = await postgresKind.open(url, { pollMs: 2 });
    const seen = record(watcher.subscribe(0));

    await Promise.all(
      writers.map(async (store, w) => {
        for (let i = 0; i < 40; i++) {
          const result = await store.append({
            expected: { [`counter:w${w}`]: 'any' },
            events: [bumped(`counter:w${w}`, i), bumped(`counter:w${w}`, i)],
          });
          if (!result.ok) throw result.conflict;
        }
      }),
    );
    const events = await seen.untilCount(240, 10_000);

    expect(events.map((e) => e.seq)).toEqual(oneTo(240));
    for (let w = 0; w < 3; w++) expect(events.filter((e) => e.stream === `counter:w${w}`).map((e) => e.version)).toEqual(oneTo(80));
    await Promise.all(writers.map((w) => w.close()));
  });

  it('given a database whose transactions default to serializable, when a transaction waits for the write lock behind another, then it still takes the next seq: the order does not depend on the server default', async () => {
    // A DBA's `default_transaction_isolation`: a snapshot taken when the lock was asked for would miss the commit it waited for.
    const log = new URL(await freshPostgresLog());
    log.searchParams.set('options', `${log.searchParams.get('options')} -c default_transaction_isolation=serializable`);
    const url = log.toString();
    const slow = await heldWriter(url);
    const fast = await postgresKind.open(url);

    const lower = slow.store.append({ expected: { 'counter:slow': 0 }, events: [bumped('counter:slow', 1)] });
    await slow.isHeld;
    const higher = fast.append({ expected: { 'counter:fast': 0 }, events: [bumped('counter:fast', 2)] });
    expect(await settled(higher)).toBe(false);
    slow.release();
    const [a, b] = await Promise.all([lower, higher]);
    await slow.close();

    expect(a).toMatchObject({ ok: true, events: [{ seq: 1, stream: 'counter:slow' }] });
    expect(b).toMatchObject({ ok: true, events: [{ seq: 2, stream: 'counter:fast' }] });
  });

  it('given an append transaction in flight, when the server ends its session (a restart, an administrator), then the append fails as an outage to retry, the process goes on, and nothing of it is committed', async () => {
    const url = await freshPostgresLog();
    const cut = await heldWriter(url);
    const appended = cut.store.append({ expected: { 'counter:cut': 0 }, events: [bumped('counter:cut', 1)] });
    await cut.isHeld;
    // Only the session holding this log's append lock: other test files append to logs of the same
    // cluster meanwhile (and kysely's migrator holds advisory locks too), and theirs must live on.
    await withClient(url, (admin) => admin.query(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE ${HOLDS_THIS_LOGS_LOCK}`));
    // The server's FATAL reaches the connection while the transaction holds it: told to the append, not thrown at the process.
    await until(
      'the session ended',
      5_000,
      async () => (await withClient(url, (admin) => admin.query(`SELECT 1 FROM pg_locks WHERE ${HOLDS_THIS_LOGS_LOCK}`))).rowCount === 0,
    );
    await new Promise((resolve) => setImmediate(resolve));
    cut.release();

    await expect(appended).rejects.toBeInstanceOf(LogUnwritableError);
    expect(await cut.store.readAll(0, 10)).toEqual([]);
  });

  it('given a writer that stops mid-transaction holding the write lock (a board frozen or cut off), then the others append within its idle limit, and nothing of its transaction is committed', async () => {
    const url = await freshPostgresLog();
    const frozen = await heldWriter(url, { idleInTransactionMs: 300 });
    const other = await postgresKind.open(url);

    const stuck = frozen.store.append({ expected: { 'counter:frozen': 0 }, events: [bumped('counter:frozen', 1)] });
    await frozen.isHeld;
    const started = Date.now();
    const next = await other.append({ expected: { 'counter:other': 0 }, events: [bumped('counter:other', 1)] });

    expect(next).toMatchObject({ ok: true, events: [{ seq: 1, stream: 'counter:other' }] });
    expect(Date.now() - started).toBeLessThan(5_000);
    frozen.release();
    // Its session was ended by the server: the append is an outage error to retry, not a commit.
    await expect(stuck).rejects.toBeInstanceOf(LogUnwritableError);
    expect((await other.readAll(0, 10)).map((e) => e.stream)).toEqual(['counter:other']);
  }, 15_000);

  it('given a subscriber on another store that never polls, when a commit is made, then NOTIFY wakes it', async () => {
    const url = await freshPostgresLog();
    const reader = await postgresKind.open(url, { pollMs: 600_000 });
    const writer = await postgresKind.open(url);
    await writer.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    const seen = record(reader.subscribe(0));
    await seen.untilCount(1);

    await writer.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)] });
    await writer.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 3)] });

    expect((await seen.untilCount(3, 3_000)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });
});

describe('PostgreSQL: what the database holds and refuses', () => {
  it('given a log, when a row is updated, deleted or the table truncated behind the store, then PostgreSQL refuses it', async () => {
    const url = await freshPostgresLog();
    const store = await postgresKind.open(url);
    await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

    await withClient(url, async (client) => {
      await expect(client.query(`UPDATE events SET data = '{}'`)).rejects.toThrow(/append-only: rows are never updated/);
      await expect(client.query('DELETE FROM events')).rejects.toThrow(/append-only: rows are never deleted/);
      await expect(client.query('TRUNCATE events')).rejects.toThrow(/append-only/);
      const tx = await client.query<{ tx: string }>('SELECT tx::text FROM events');
      expect(tx.rows[0]!.tx).toMatch(/^\d+$/);
    });
    expect(await store.headSeq()).toBe(1);
  });

  it('given a database with no log, when opened to read or as an existing log, then it is refused naming it, and nothing is created', async () => {
    const url = await freshPostgresLog();

    await expect(openPostgresStoreToRead(url)).rejects.toThrow(NotALogError);
    await expect(openPostgresStore(url, { existing: true })).rejects.toThrow(/no events table/);
    const tables = await withClient(url, (client) => client.query('SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()'));
    expect(tables.rowCount).toBe(0);
  });

  it('given a log opened to read, then it reads, and every write is refused by the server', async () => {
    const url = await freshPostgresLog();
    const writer = await postgresKind.open(url);
    await writer.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

    const reader = await openPostgresStoreToRead(url, { codec: counterCodec });
    try {
      expect((await reader.readAll(0, 10)).map((e) => e.seq)).toEqual([1]);
      const append = reader.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)] });
      await expect(append).rejects.toBeInstanceOf(LogUnwritableError);
      await expect(append).rejects.toThrow(/read-only/);
    } finally {
      await reader.close();
    }
    expect(await writer.headSeq()).toBe(1);
  });

  it('given a server that does not answer, when the store is opened, then LogUnwritableError names the URL without its password', async () => {
    const opening = openPostgresStore('postgres://runledger:secret@127.0.0.1:1/nowhere');

    await expect(opening).rejects.toBeInstanceOf(LogUnwritableError);
    await expect(opening).rejects.toThrow(/postgres:\/\/runledger:\*\*\*@127\.0\.0\.1:1\/nowhere.*ECONNREFUSED/);
    await expect(opening).rejects.not.toThrow(/secret/);
  });

  it('given a URL with its password as a parameter (libpq spells it ?password=), when the store cannot open it, then the error names the URL without the password', async () => {
    const opening = openPostgresStore('postgres://runledger@127.0.0.1:1/nowhere?password=s3cret&sslmode=disable');

    await expect(opening).rejects.toBeInstanceOf(LogUnwritableError);
    await expect(opening).rejects.toThrow(/127\.0\.0\.1:1\/nowhere.*ECONNREFUSED/);
    await expect(opening).rejects.not.toThrow(/s3cret/);
  });
});

describe('PostgreSQL: group commit and chains', () => {
  it('given appends made while a transaction commits, then they share the next one, and a batch whose transaction fails rejects every append of it and breaks their chains, the next committing', async () => {
    const url = await freshPostgresLog();
    let fail = false;
    const store = await openPostgresStore(url, {
      codec: counterCodec,
      faults: { failWrites: () => (fail ? new Error('the server refused the batch') : null) },
    });
    const chain = new AppendChain();

    fail = true;
    const failing = [0, 1, 2].map((i) => store.append({ expected: { 'counter:a': i }, events: [bumped('counter:a', i + 1)], chain: chain.next() }));
    const outcomes = await Promise.allSettled(failing);
    fail = false;
    const after = await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 9)], chain: chain.next() });
    const fresh = await Promise.all([0, 1, 2].map((i) => store.append({ expected: { [`counter:b${i}`]: 0 }, events: [bumped(`counter:b${i}`, i)] })));

    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(chain.broken).toBe(true);
    expect(after).toMatchObject({ ok: false, conflict: { brokenChain: true } });
    expect(fresh.map((r) => r.ok && r.events[0]!.seq)).toEqual([1, 2, 3]);
    expect(await store.headSeq()).toBe(3);
    await store.close();
  });
});
