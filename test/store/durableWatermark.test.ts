import { rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AppendChain, type AppendResult } from '../../runtime/store/eventStore.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import { WalSync } from '../../runtime/store/sqlite/walSync.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { nextTurn } from '../support/countTransactions.ts';
import { bumped, oneTo } from '../support/events.ts';
import { record } from '../support/observe.ts';
import { tempDbPath } from '../support/tempStore.ts';
import { type Tracked, tracked } from '../support/tracked.ts';

/**
 * An fsync the test lets end: each of the store's fsyncs waits at the fault seam until `release()`
 * (or fails with the error given to it). `entered(n)` waits, bounded, for the n-th to have begun.
 */
function slowFsync() {
  const gates: { open: (error: Error | null) => void }[] = [];
  const waiters: (() => void)[] = [];
  return {
    faults: {
      syncWal: () =>
        new Promise<Error | null>((open) => {
          gates.push({ open });
          for (const w of waiters.splice(0)) w();
        }),
    },
    get begun() {
      return gates.length;
    },
    entered(n: number, ms = 5_000): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${gates.length} of ${n} fsyncs begun within ${ms} ms`)), ms);
        const check = () => {
          if (gates.length >= n) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    },
    /** Ends the n-th fsync (1-based), with `error` as its failure if given. */
    release(n: number, error: Error | null = null) {
      gates[n - 1]!.open(error);
    },
  };
}

/** What the file holds, read by a connection of its own: what a power cut would find after the fsync. */
function seqsInFile(path: string): number[] {
  const raw = new Database(path, { readonly: true });
  try {
    return raw.prepare<[], number>('SELECT seq FROM events ORDER BY seq').pluck().all();
  } finally {
    raw.close();
  }
}

const eio = () => Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });

describe('--sync full: nothing is answered or followed before its fsync has ended (the durable watermark)', () => {
  it('given a slow fsync, when an append commits, then neither its promise nor a subscriber nor any read of events sees it before the fsync ends', async () => {
    const path = tempDbPath();
    const disk = slowFsync();
    const store = await openCounterStore(path, { faults: disk.faults });
    const seen = record(store.subscribe(0));

    const first = tracked(store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] }));
    await disk.entered(1);
    for (let i = 0; i < 5; i++) await nextTurn();

    // Committed (another connection reads it) but not yet on disk: nobody in the store's process knows.
    expect(seqsInFile(path)).toEqual([1]);
    expect(first.settled).toBe(false);
    expect(seen.items).toEqual([]);
    expect(await store.readAll(0, 10)).toEqual([]);
    expect(await store.headSeq()).toBe(0);
    expect(await store.readStream('counter:a')).toEqual([]);
    expect(await store.streamVersion('counter:a')).toBe(0);
    expect(await store.lastOfStream('counter:a')).toBeNull();
    expect(await store.readEntity('counter:a')).toEqual([]);

    disk.release(1);
    expect(await first.result).toMatchObject({ ok: true, events: [{ seq: 1 }] });
    await seen.untilCount(1);
    expect((await store.readAll(0, 10)).map((e) => e.seq)).toEqual([1]);
    expect(await store.headSeq()).toBe(1);
    expect((await store.readStream('counter:a')).map((e) => e.seq)).toEqual([1]);
    expect(await store.streamVersion('counter:a')).toBe(1);
    expect(await store.lastOfStream('counter:a')).toMatchObject({ seq: 1 });
    expect((await store.readEntity('counter:a')).map((e) => e.seq)).toEqual([1]);
  });

  it('given an fsync in flight, when more appends are made meanwhile, then they gather into the next batch: one transaction and one fsync for all', async () => {
    const disk = slowFsync();
    const store = await openCounterStore(tempDbPath(), { faults: disk.faults });
    const first = tracked(store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] }));
    await disk.entered(1);

    // Over several turns, while the first fsync has not ended: none of them is answered yet.
    const later: Tracked<AppendResult>[] = [];
    for (const n of [2, 3, 4]) {
      later.push(tracked(store.append({ expected: { 'counter:a': n - 1 }, events: [bumped('counter:a', n)] })));
      await nextTurn();
    }
    expect(disk.begun).toBe(1);
    expect(later.some((a) => a.settled)).toBe(false);

    disk.release(1);
    await first.result;
    const fsyncsBefore = store.fsyncs;
    await disk.entered(2);
    expect(later.some((a) => a.settled)).toBe(false);
    disk.release(2);
    const results = await Promise.all(later.map((a) => a.result));

    expect(results.map((r) => r.ok && r.events.map((e) => e.seq))).toEqual([[2], [3], [4]]);
    expect(disk.begun).toBe(2);
    // One real fdatasync for the three appends.
    expect(store.fsyncs - fsyncsBefore).toBe(1);
  });

  it('given an fsync that fails (EIO), then its batch is refused with LogUnwritableError naming the WAL, its chain breaks, the store takes no more appends, and on reopen the log goes on', async () => {
    const path = tempDbPath();
    const disk = slowFsync();
    const lines: string[] = [];
    const store = await openCounterStore(path, { faults: disk.faults, report: (line) => lines.push(line) });
    const seen = record(store.subscribe(0));
    const chain = new AppendChain();

    const failed = store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: chain.next() });
    const refusal = expect(failed).rejects.toMatchObject({ path: `${path}-wal`, reason: 'io_error', code: 'EIO' });
    await disk.entered(1);
    disk.release(1, eio());
    await refusal;
    await expect(failed).rejects.toBeInstanceOf(LogUnwritableError);
    expect(chain.broken).toBe(true);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${path}-wal`);
    expect(lines[0]).toContain('restart the daemon');

    // Broken, as after PostgreSQL's fsyncgate: a later fsync could not vouch for the batch, so none is tried.
    const retried = store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    await expect(retried).rejects.toMatchObject({ path: `${path}-wal`, reason: 'io_error' });
    expect(disk.begun).toBe(1);
    expect(seen.items).toEqual([]);
    expect(await store.readAll(0, 10)).toEqual([]);
    expect(lines).toHaveLength(1);
    await store.close();

    // Reopened, the log is what the file holds (here the page cache kept the batch, as a crash would)
    // and its appends go on from there.
    const reopened = await openCounterStore(path);
    const head = await reopened.headSeq();
    const next = await reopened.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1)] });
    expect(next).toMatchObject({ ok: true, events: [{ seq: head + 1 }] });
    expect((await reopened.readAll(0, 10)).map((e) => e.seq)).toEqual(oneTo(head + 1));
  });

  it('given --sync normal, then an append is answered in the turn after it, with no fsync of the store', async () => {
    const store = await openCounterStore(tempDbPath(), { sync: 'normal' });
    const append = tracked(store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] }));
    await nextTurn();
    expect(append.settled).toBe(true);
    expect(store.fsyncs).toBe(0);
    expect(store.db.pragma('synchronous', { simple: true })).toBe(1);
  });

  it('given --sync full, then each group commit is one real fdatasync of the WAL (the connection itself syncs only at checkpoints)', async () => {
    const store = await openCounterStore(tempDbPath());
    expect(store.db.pragma('synchronous', { simple: true })).toBe(1);
    await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    const after = store.fsyncs;
    expect(after).toBeGreaterThanOrEqual(1);
    await Promise.all(oneTo(3).map((n) => store.append({ expected: { [`counter:${n}`]: 0 }, events: [bumped(`counter:${n}`, n)] })));
    expect(store.fsyncs).toBe(after + 1);
  });

  it('given a checkpoint that truncates the WAL (TRUNCATE, another connection), then the next commits are synced through the same file, and read back', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    const other = new Database(path);
    expect(other.pragma('wal_checkpoint(TRUNCATE)', { simple: true })).toBe(0);
    other.close();
    const before = store.fsyncs;

    await store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)] });
    expect(store.fsyncs).toBe(before + 1);
    expect(seqsInFile(path)).toEqual([1, 2]);
  });
});

describe('WalSync: the fd it syncs is the live WAL', () => {
  it('given the WAL deleted and made again (a new inode), when it syncs, then it opens the new file and syncs its folder too', async () => {
    const path = `${tempDbPath()}-wal`;
    writeFileSync(path, 'first');
    const wal = new WalSync(path);
    try {
      await wal.sync();
      expect(wal.fsyncs).toBe(2);
      await wal.sync();
      expect(wal.fsyncs).toBe(3);

      rmSync(path);
      writeFileSync(path, 'second');
      // The old file's fsync, then the new one's folder and the new file.
      await wal.sync();
      expect(wal.fsyncs).toBe(6);
      await wal.sync();
      expect(wal.fsyncs).toBe(7);
    } finally {
      await wal.close();
    }
  });
});
