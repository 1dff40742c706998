/**
 * Another process's commits to a SQLite log wake its subscribers when the log's folder reports them,
 * and a log at rest is not looked at four times a second (docs/architecture.md#an-idle-process-sleeps).
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { foreignCommits } from '../../runtime/store/sqlite/foreignCommits.ts';
import { bumped } from '../support/events.ts';
import { record } from '../support/observe.ts';
import { sqliteKind } from '../support/storeKinds.ts';
import { tempDir } from '../support/tempStore.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Looks counted, and a subscription to `foreignCommits` of `path` that ends with the test. */
function watched(path: string, pollMs: number) {
  let looks = 0;
  let wakes = 0;
  const subscription = foreignCommits(
    path,
    () => {
      looks++;
      return true;
    },
    { pollMs },
  ).subscribe(() => wakes++);
  return { looks: () => looks, wakes: () => wakes, stop: () => subscription.unsubscribe() };
}

describe('another process commits to the log', () => {
  it('given a reader that never polls, when another connection commits, then its subscriber has the events at once', async () => {
    const where = await sqliteKind.fresh();
    const reader = await sqliteKind.open(where, { pollMs: 2 ** 31 - 1 });
    const writer = await sqliteKind.open(where);
    const seen = record(reader.subscribe(0));
    await writer.append({ expected: { 'counter:a': 'any' }, events: [bumped('counter:a', 0), bumped('counter:a', 1)] });
    // The net poll of a watched folder is 5 s: this is the folder's report.
    await seen.untilCount(2, 2_500);
    expect(seen.items.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('given a daemon-like reader that never polls, when another process (the stock sqlite3 shell) commits a row, then its subscriber has it at once', async () => {
    const where = await sqliteKind.fresh();
    const reader = await sqliteKind.open(where, { pollMs: 2 ** 31 - 1 });
    const seen = record(reader.subscribe(0));
    const row = `insert into events (seq, stream, version, type, data, at, cause, actor) values (1, 'counter:a', 1, 'counter.bumped', '{"total":1}', 1000, null, 'shell:1')`;
    execFileSync('sqlite3', [where, row]);
    await seen.untilCount(1, 2_500);
    expect(seen.items[0]).toMatchObject({ seq: 1, stream: 'counter:a', actor: 'shell:1' });
  });

  it('given a log at rest, then its data version is not read; a write to its WAL file reads it once for a burst', async () => {
    const path = join(tempDir(), 'runledger.db');
    const log = watched(path, 250);
    await sleep(700);
    expect(log.looks()).toBe(0);
    for (let i = 0; i < 5; i++) appendFileSync(`${path}-wal`, 'x');
    // Another file of the folder is not the log's.
    appendFileSync(join(path, '..', 'token'), 'x');
    await sleep(300);
    expect(log.looks()).toBeGreaterThanOrEqual(1);
    expect(log.looks()).toBeLessThanOrEqual(2);
    expect(log.wakes()).toBe(log.looks());
    log.stop();
  });

  it('given a report that comes before the other connection published its commit, then the log is looked at once more and the commit heard', async () => {
    const path = join(tempDir(), 'runledger.db');
    let looks = 0;
    let wakes = 0;
    // The first look finds nothing yet (the WAL's frames written, the commit not yet in its index).
    const subscription = foreignCommits(path, () => ++looks >= 2, { pollMs: 250 }).subscribe(() => wakes++);
    appendFileSync(`${path}-wal`, 'x');
    await sleep(400);
    subscription.unsubscribe();
    expect(wakes).toBe(1);
  });

  it('given a folder that cannot be watched, then the log is looked at every pollMs', async () => {
    const log = watched(join(tempDir(), 'gone', 'runledger.db'), 20);
    await sleep(300);
    expect(log.looks()).toBeGreaterThanOrEqual(3);
    log.stop();
  });
});
