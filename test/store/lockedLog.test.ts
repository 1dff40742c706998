/**
 * A SQLite log whose write lock another process holds (issue 31): a short hold is waited out unseen,
 * off the main thread; a long one fails the append as an outage naming the cause and the holder, soon,
 * and the event loop keeps turning meanwhile (docs/rules.md#the-log).
 */
import { describe, expect, it } from 'vitest';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import { LOCK_PATIENCE_MS } from '../../runtime/store/sqlite/lockWait.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { bumped } from '../support/events.ts';
import { SqliteShell } from '../support/sqliteShell.ts';
import { tempDbPath } from '../support/tempStore.ts';

/** The longest gap between ticks of a 10 ms interval while `work` runs: how long the event loop was held. */
async function longestStall<T>(work: Promise<T>): Promise<{ outcome: PromiseSettledResult<T>; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  const [outcome] = await Promise.allSettled([work]);
  clearInterval(tick);
  return { outcome: outcome!, stallMs };
}

describe('a log whose write lock another process holds', () => {
  it('given the lock released within the patience, then the append commits, nothing is reported, and the event loop was never held long', async () => {
    const path = tempDbPath();
    const lines: string[] = [];
    const store = await openCounterStore(path, { sync: 'normal', report: (line) => lines.push(line) });
    const shell = await SqliteShell.open(path, 'write');
    const append = store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    setTimeout(() => void shell.close(), LOCK_PATIENCE_MS / 4);
    const { outcome, stallMs } = await longestStall(append);
    expect(outcome).toMatchObject({ status: 'fulfilled', value: { ok: true } });
    expect(lines).toEqual([]);
    expect(stallMs).toBeLessThan(1_000);
  });

  it('given the lock held on, then the append fails as `locked` within about the patience, the outage is told once naming the holder, and it commits once the lock goes', async () => {
    const path = tempDbPath();
    const lines: string[] = [];
    const store = await openCounterStore(path, { sync: 'normal', report: (line) => lines.push(line) });
    const shell = await SqliteShell.open(path, 'write');
    const began = performance.now();
    const { outcome, stallMs } = await longestStall(store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] }));
    const tookMs = performance.now() - began;

    expect(outcome.status).toBe('rejected');
    const error = (outcome as PromiseRejectedResult).reason as LogUnwritableError;
    expect(error).toBeInstanceOf(LogUnwritableError);
    expect(error).toMatchObject({ reason: 'locked', publicReason: 'the log cannot be written: it is locked by another process' });
    expect(tookMs).toBeLessThan(LOCK_PATIENCE_MS + 1_000);
    expect(stallMs).toBeLessThan(1_000);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`the log ${path} cannot be written: it is locked by another process`);
    expect(lines[0]).toContain(`its write lock is held by pid ${shell.pid} (sqlite3)`);
    expect(store.unwritable()).toBe(error);

    await shell.close();
    await expect(store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] })).resolves.toMatchObject({ ok: true });
    expect(store.unwritable()).toBeNull();
    expect(lines[1]).toMatch(/can be written again \(SQLITE_BUSY is over\)/);
  });
});
