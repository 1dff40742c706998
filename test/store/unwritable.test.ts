import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AppendChain, appendOrThrow } from '../../runtime/store/eventStore.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { bumped, oneTo } from '../support/events.ts';
import { record } from '../support/observe.ts';
import { tempDbPath } from '../support/tempStore.ts';

/** A disk that is full until `free()` is called: the store's own fault seam, inside its commit. */
function fullDisk() {
  let full = true;
  return {
    faults: { failWrites: () => (full ? new Database.SqliteError('database or disk is full', 'SQLITE_FULL') : null) },
    free: () => (full = false),
  };
}

describe('a write that fails for a reason of the machine', () => {
  it('is refused with LogUnwritableError naming the file and the cause, and nothing of its batch is kept', async () => {
    const path = tempDbPath();
    const disk = fullDisk();
    const store = await openCounterStore(path, { faults: disk.faults });

    // Two appends in one turn of the event loop: one group commit, one transaction, both refused.
    const outcomes = await Promise.allSettled([
      store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1), bumped('counter:a', 2)] }),
      store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1)] }),
    ]);

    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(LogUnwritableError);
      expect(error).toMatchObject({ path, reason: 'disk_full', code: 'SQLITE_FULL' });
      expect(error.message).toContain(path);
      expect(error.message).toContain('the disk is full');
    }
    expect(await store.headSeq()).toBe(0);
    expect(await store.streamVersion('counter:a')).toBe(0);
  });

  it('writes that fail for a while then succeed: nothing half-written, the seq continues, subscribers see every commit once', async () => {
    let failing = false;
    const store = await openCounterStore(tempDbPath(), {
      faults: { failWrites: () => (failing ? new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE') : null) },
    });
    const seen = record(store.subscribe(0));
    await appendOrThrow(store, { expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

    failing = true;
    for (let i = 0; i < 3; i++) {
      await expect(store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2), bumped('counter:a', 3)] })).rejects.toBeInstanceOf(
        LogUnwritableError,
      );
    }
    failing = false;
    await appendOrThrow(store, { expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2), bumped('counter:a', 3)] });
    await appendOrThrow(store, { expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1)] });

    const all = await store.readAll(0, 100);
    expect(all.map((e) => e.seq)).toEqual(oneTo(4));
    expect(all.map((e) => [e.stream, e.version])).toEqual([
      ['counter:a', 1],
      ['counter:a', 2],
      ['counter:a', 3],
      ['counter:b', 1],
    ]);
    await seen.untilCount(4);
    expect(seen.items.map((e) => e.seq)).toEqual(oneTo(4));
  });

  it('breaks the chain of its append: a later append of that chain is refused unwritten, and a new chain commits once the disk has room', async () => {
    const disk = fullDisk();
    const store = await openCounterStore(tempDbPath(), { faults: disk.faults });
    const chain = new AppendChain();

    await expect(store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: chain.next() })).rejects.toBeInstanceOf(
      LogUnwritableError,
    );
    disk.free();
    const later = await store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)], chain: chain.next() });

    expect(later.ok).toBe(false);
    expect(chain.broken).toBe(true);
    const fresh = new AppendChain();
    const retried = await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: fresh.next() });
    expect(retried.ok && retried.events.map((e) => e.seq)).toEqual([1]);
  });
});
