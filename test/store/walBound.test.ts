/**
 * The WAL under a long reader (issue 31): a `sqlite3` shell keeping a read transaction open stops
 * SQLite from reusing the WAL, which then grows with every commit and, once the reader went, is never
 * given back on its own. The store says so while it grows, naming the reader, and cuts the WAL back
 * once the reader allows (docs/rules.md#the-log).
 */
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { waitUntil } from '../support/daemonProcess.ts';
import { bumped, T0 } from '../support/events.ts';
import { SqliteShell } from '../support/sqliteShell.ts';
import { tempDbPath } from '../support/tempStore.ts';

const LIMIT = 256 * 1024;

describe('the WAL under a reader that keeps a read transaction open', () => {
  it('given a sqlite3 shell reading while 2 MB are committed, then the store names the reader while the WAL is over its bound, and truncates it once the reader ends', async () => {
    const path = tempDbPath();
    const lines: string[] = [];
    const store = await openCounterStore(path, { sync: 'normal', wal: { limitBytes: LIMIT, lookEveryMs: 250 }, report: (line) => lines.push(line) });
    const walSize = () => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

    const reader = await SqliteShell.open(path, 'read');
    const padding = 'x'.repeat(4_000);
    for (let i = 0; i < 500; i++) {
      await store.append({
        expected: { [`counter:p${i}`]: 0 },
        events: [{ stream: `counter:p${i}`, type: 'counter.bump.refused', data: { total: i, reason: padding }, at: T0 }],
      });
    }
    expect(walSize()).toBeGreaterThan(4 * LIMIT);
    await waitUntil('the store to name the reader', () => lines.some((line) => line.includes(`pid ${reader.pid} (sqlite3)`)), 5_000);
    const warning = lines.find((line) => line.includes(`pid ${reader.pid}`))!;
    expect(warning).toMatch(new RegExp(`^the WAL of the log ${path} has grown to \\d+(\\.\\d)? MB`));
    expect(warning).toMatch(/keeps a read transaction open on the log/);

    await reader.close();
    await waitUntil('the WAL to be cut back', () => walSize() <= LIMIT, 5_000);
    await waitUntil('the store to say so', () => lines.some((line) => /^the WAL of the log .* is back to/.test(line)), 5_000);
  });
});
