import { execFileSync, spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { bumped, bumpRequested } from '../support/events.ts';
import { tempDbPath } from '../support/tempStore.ts';

const COLUMNS = 'select seq, stream, version, type, data, at, cause, actor from events order by seq';

describe('the log file', () => {
  it('given a log written by runledger, when the stock sqlite3 shell reads it, then it sees every column of every event', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    await store.append({
      expected: { 'counter:a': 0, 'c1/run:r-1': 0 },
      events: [bumpRequested('counter:a', 3, 10, 1000), { ...bumped('counter:a', 3, 1000), cause: { inBatch: 0 } }, bumped('c1/run:r-1', 7, 2000)],
    });

    const out = execFileSync('sqlite3', ['-json', path, COLUMNS], { encoding: 'utf8' });

    expect(JSON.parse(out)).toEqual([
      {
        seq: 1,
        stream: 'counter:a',
        version: 1,
        type: 'counter.bump.requested',
        data: '{"by":3,"limit":10}',
        at: 1000,
        cause: null,
        actor: store.writer,
      },
      { seq: 2, stream: 'counter:a', version: 2, type: 'counter.bumped', data: '{"total":3}', at: 1000, cause: 1, actor: store.writer },
      { seq: 3, stream: 'c1/run:r-1', version: 1, type: 'counter.bumped', data: '{"total":7}', at: 2000, cause: null, actor: store.writer },
    ]);
    expect(execFileSync('sqlite3', [path, "select json_extract(data, '$.total') from events where seq = 2"], { encoding: 'utf8' }).trim()).toBe('3');
  });

  it('given a new log, then it is in WAL mode', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);

    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(execFileSync('sqlite3', [path, 'pragma journal_mode'], { encoding: 'utf8' }).trim()).toBe('wal');
  });

  it('given a log opened, then SQLite keeps 2 MiB of its pages in the process, not the 16 MiB better-sqlite3 builds it with', async () => {
    const store = await openCounterStore(tempDbPath());

    // A daemon's log outgrows 16 MiB within a few thousand runs, and the cache then held all of it for good.
    expect(store.db.pragma('cache_size', { simple: true })).toBe(-2_000);
  });

  it('given a log with events, when anyone tries to UPDATE or DELETE a row, then the triggers refuse it and the row is unchanged', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

    const raw = new Database(path);
    try {
      expect(() => raw.prepare(`update events set data = '{"total":2}' where seq = 1`).run()).toThrow(/append-only: rows are never updated/);
      expect(() => raw.prepare('delete from events where seq = 1').run()).toThrow(/append-only: rows are never deleted/);
    } finally {
      raw.close();
    }
    const shell = spawnSync('sqlite3', [path, 'delete from events'], { encoding: 'utf8' });
    expect(shell.status).not.toBe(0);
    expect(shell.stderr).toMatch(/append-only/);

    expect(await store.readAll(0, 10)).toMatchObject([{ seq: 1, data: { total: 1 } }]);
  });

  it('given the schema, then (stream, version) is unique and seq is the integer primary key', async () => {
    const path = tempDbPath();
    await openCounterStore(path);

    const raw = new Database(path);
    try {
      const insert = raw.prepare(
        `insert into events (seq, stream, version, type, data, at, cause, actor) values (?, 'counter:a', 1, 'counter.bumped', '{"total":1}', 0, null, 'h:1')`,
      );
      insert.run(1);
      expect(() => insert.run(2)).toThrow(/UNIQUE/);
      expect(() => insert.run(1)).toThrow(/UNIQUE|PRIMARY/);
    } finally {
      raw.close();
    }
  });

  it('given a log file made earlier, when it is opened again, then its events are there and the migrations do not run twice', async () => {
    const path = tempDbPath();
    const first = await openCounterStore(path);
    await first.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    await first.close();

    const second = await openCounterStore(path);

    expect(await second.headSeq()).toBe(1);
    await second.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)] });
    expect(await second.streamVersion('counter:a')).toBe(2);
  });
});
