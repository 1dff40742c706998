import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { nextTurn, openCountedStore, transactions } from '../support/countTransactions.ts';
import { bumped, oneTo } from '../support/events.ts';
import { tempDbPath } from '../support/tempStore.ts';
import { tracked } from '../support/tracked.ts';

async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await nextTurn();
}

/**
 * Stops the clock the store ages a held batch by (`performance.now`), so that a test decides when a
 * batch is old: no held batch ages past its limit because the machine was slow. Integers only, so
 * that the age of a batch is exact.
 */
function frozenClock() {
  let now = Math.round(performance.now());
  const spy = vi.spyOn(performance, 'now').mockImplementation(() => now);
  onTestFinished(() => spy.mockRestore());
  return {
    advance(ms: number) {
      now += ms;
    },
  };
}

/**
 * A fresh store, its transactions counted from here on. Without the fsync of `--sync full` (its own
 * rules are in durableWatermark.test.ts): a commit is answered in the turn it is made, so the turns
 * counted here are the batching's alone.
 */
async function freshStore(): Promise<SqliteEventStore> {
  const store = await openCountedStore(tempDbPath(), { sync: 'normal' });
  transactions.length = 0;
  return store;
}

/** The n-th append to counter:a, its total n: unchecked, so that any number of them can share a batch. */
const nth = (store: SqliteEventStore, n: number) => tracked(store.append({ expected: { 'counter:a': 'any' }, events: [bumped('counter:a', n)] }));

/** A hold released when the test ends, whatever it asserted: a hold left over would slow the next. */
function hold(store: SqliteEventStore): () => void {
  const release = store.holdCommits();
  onTestFinished(release);
  return release;
}

describe('holdCommits: the group commit waits for a writer that has more appends to come', () => {
  it('given no hold, when appends are made in one turn, then they commit in the next turn, in one transaction', async () => {
    frozenClock();
    const store = await freshStore();

    const appends = oneTo(3).map((n) => nth(store, n));
    await nextTurn();

    expect(appends.every((a) => a.settled)).toBe(true);
    expect(transactions.map((t) => t.length)).toEqual([3]);
  });

  it('given a hold, when appends are made over several turns, then none commits while it is held and all commit together in one transaction once it is released', async () => {
    frozenClock();
    const store = await freshStore();
    const release = hold(store);

    const appends = [nth(store, 1)];
    await turns(3);
    appends.push(nth(store, 2));
    await turns(3);
    appends.push(nth(store, 3));
    await turns(10);
    expect(transactions).toHaveLength(0);
    expect(appends.some((a) => a.settled)).toBe(false);

    // Releasing the last hold schedules the commit: no further append is needed.
    release();
    const results = await Promise.all(appends.map((a) => a.result));

    expect(transactions.map((t) => t.length)).toEqual([3]);
    expect(results.map((r) => r.ok && r.events.map((e) => [e.seq, e.data]))).toEqual([[[1, { total: 1 }]], [[2, { total: 2 }]], [[3, { total: 3 }]]]);
    expect((await store.readStream('counter:a')).map((e) => e.version)).toEqual(oneTo(3));
  });

  it('given a hold, when the batch is younger than 4 ms, then it waits, and once it is 4 ms old (counted from its first append) it commits without a release', async () => {
    const clock = frozenClock();
    const store = await freshStore();
    hold(store);

    const first = nth(store, 1);
    clock.advance(3);
    const second = nth(store, 2);
    await turns(10);
    expect(transactions).toHaveLength(0);

    // 4 ms after the first append, though only 1 ms after the second.
    clock.advance(1);
    await Promise.all([first.result, second.result]);

    expect(transactions.map((t) => t.length)).toEqual([2]);
  });

  it('given a hold never released, when an append is made, then it still commits once the batch is 4 ms old, not at a release that never comes', async () => {
    const store = await freshStore();
    hold(store);

    const started = performance.now();
    const result = await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    const took = performance.now() - started;

    expect(result).toMatchObject({ ok: true, events: [{ seq: 1, version: 1 }] });
    expect(transactions.map((t) => t.length)).toEqual([1]);
    // The batch ages 4 ms; a hold that waited for its release would hang to the test's timeout. A
    // second is 250 times the age, so a loaded machine (392 ms seen at four times this one's load) stays
    // well inside it.
    expect(took).toBeLessThan(1_000);
  });

  it('given a hold, when 255 appends are pending, then they wait, and the 256th makes the batch full: all commit in one transaction without a release', async () => {
    frozenClock();
    const store = await freshStore();
    hold(store);

    const appends = oneTo(255).map((n) => nth(store, n));
    await turns(10);
    expect(transactions).toHaveLength(0);
    appends.push(nth(store, 256));
    const results = await Promise.all(appends.map((a) => a.result));

    expect(results.every((r) => r.ok)).toBe(true);
    expect(transactions.map((t) => t.length)).toEqual([256]);
    expect(await store.headSeq()).toBe(256);
  });

  it('given a hold, when 256 appends are made in one turn, then they commit in one transaction without a release', async () => {
    frozenClock();
    const store = await freshStore();
    hold(store);

    const results = await Promise.all(oneTo(256).map((n) => nth(store, n).result));

    expect(results.every((r) => r.ok)).toBe(true);
    expect(transactions.map((t) => t.length)).toEqual([256]);
  });

  it('given two holds, when one is released, then the commit still waits, and it commits once both are', async () => {
    frozenClock();
    const store = await freshStore();
    const releaseA = hold(store);
    const releaseB = hold(store);

    const append = nth(store, 1);
    await turns(5);
    releaseA();
    await turns(10);
    expect(append.settled).toBe(false);
    expect(transactions).toHaveLength(0);
    releaseB();

    expect(await append.result).toMatchObject({ ok: true });
    expect(transactions.map((t) => t.length)).toEqual([1]);
  });

  it('given two holds, when one is released twice, then it does not release the other; and after all are released, a new hold still holds', async () => {
    frozenClock();
    const store = await freshStore();
    const releaseA = hold(store);
    const releaseB = hold(store);

    const first = nth(store, 1);
    releaseA();
    releaseA();
    await turns(10);
    expect(first.settled).toBe(false);
    releaseB();
    releaseB();
    expect(await first.result).toMatchObject({ ok: true });

    // Had a second release counted, the store would owe a hold: a new one would not hold.
    const releaseC = hold(store);
    const second = nth(store, 2);
    await turns(10);
    expect(second.settled).toBe(false);
    releaseC();
    expect(await second.result).toMatchObject({ ok: true });
    expect(transactions.map((t) => t.length)).toEqual([1, 1]);
  });

  it('given a hold and nothing pending, when it is released, then no transaction is made', async () => {
    frozenClock();
    const store = await freshStore();

    hold(store)();
    await turns(5);

    expect(transactions).toHaveLength(0);
  });

  it('given appends committed under a hold, then a subscriber is handed them once, in seq order, as one group commit', async () => {
    frozenClock();
    const store = await freshStore();
    const seen: number[] = [];
    const subscription = store.subscribe(0).subscribe((event) => seen.push(event.seq));
    onTestFinished(() => subscription.unsubscribe());
    const release = hold(store);

    const appends = [nth(store, 1)];
    await turns(3);
    appends.push(nth(store, 2));
    await turns(3);
    expect(seen).toEqual([]);
    release();
    await Promise.all(appends.map((a) => a.result));
    await vi.waitFor(() => expect(seen).toEqual([1, 2]));
    expect(transactions).toHaveLength(1);
  });

  // FAILS against the current store: close() commits the pending batch with `flush()`, but while a
  // hold is outstanding and the batch is young, flush() only schedules another turn and returns; the
  // store then closes its connection, and the rescheduled flush's transaction throws on it. Appends
  // accepted before close() are rejected ("The database connection is not open") and never written,
  // although with no hold close() commits them.
  it('given a hold outstanding, when the store is closed with appends pending, then they are committed before it closes, as without a hold', async () => {
    const path = tempDbPath();
    const store = await openCountedStore(path);
    hold(store);

    const append = store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    const outcome = append.then(
      (result) => result,
      (error: Error) => error,
    );
    await store.close();

    expect(await outcome).toMatchObject({ ok: true, events: [{ seq: 1 }] });
    const reopened = await openCountedStore(path);
    expect(await reopened.headSeq()).toBe(1);
  });
});
