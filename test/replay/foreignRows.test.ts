import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { InvalidEventError } from '../../events/codec.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { openSqliteStoreToRead } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { runledger } from '../support/processes.ts';
import { scenarioCopy } from './scenarioLog.ts';

/** A copy of the scenario with one more row at its end, as a newer (or broken) writer could add; its seq. */
function scenarioWith(row: { stream: string; type: string; data: string }): { path: string; seq: number } {
  const path = scenarioCopy();
  const db = new Database(path);
  try {
    const result = db
      .prepare(
        `INSERT INTO events (stream, version, type, data, at, cause, actor)
         VALUES (@stream, (SELECT coalesce(max(version), 0) + 1 FROM events WHERE stream = @stream), @type, @data, 1, NULL, 'newer:1')`,
      )
      .run(row);
    return { path, seq: Number(result.lastInsertRowid) };
  } finally {
    db.close();
  }
}

describe('replay of a log holding a row this version cannot read', () => {
  it('given a row of an unknown type, then the replay fails naming its seq, in process and with exit 1 through the CLI', async () => {
    const { path, seq } = scenarioWith({ stream: 'c1/run:r9', type: 'run.teleported', data: '{"to":"mars"}' });
    const store = await openSqliteStoreToRead(path, { foreignRows: 'fail' });

    const replay = replayLog(store, deciders);

    await expect(replay).rejects.toBeInstanceOf(InvalidEventError);
    await expect(replay).rejects.toMatchObject({ seq, type: 'run.teleported' });
    await store.close();
    const cli = runledger(['replay', '--db', path, '--json']);
    expect(cli.status).toBe(1);
    expect(JSON.parse(cli.stdout)).toMatchObject({ ok: false, seq, type: 'run.teleported', problem: expect.stringContaining('unknown event type') });
  });

  it('given a known type whose data has not its shape, in a stream a decider folds, then the replay fails naming its seq', async () => {
    const { path, seq } = scenarioWith({ stream: 'c1/lane:A', type: 'run.parked', data: '{"oops":1}' });
    const store = await openSqliteStoreToRead(path, { foreignRows: 'fail' });

    await expect(replayLog(store, deciders)).rejects.toMatchObject({ seq, type: 'run.parked', problem: expect.stringContaining('runId') });
    await store.close();
  });
});
