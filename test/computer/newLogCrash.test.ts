/**
 * A new log's schema is written in one transaction (runtime/store/sqlite/migrations.ts): a process
 * killed while it writes one leaves a file SQLite rolls back to empty at its next open, never half a
 * schema, and the next daemon on it writes the whole schema and works.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { DaemonProcess, logRows, waitUntil } from '../support/daemonProcess.ts';
import { exitOf } from '../support/exitOf.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';

describe('runledger daemon on a new log whose schema a process was killed writing', () => {
  it('given a writer SIGKILLed mid-schema (its journal hot on disk), then the daemon rolls it back, writes the whole schema, runs a turn, and the log replays', async () => {
    const db = join(tempDir(), 'runledger.db');
    // The stock shell begins the schema and enough beside it that its pages spill to the file (a
    // one-page cache) and the journal holds the file as it was: then it dies inside the transaction.
    const shell = spawn('sqlite3', [db], { stdio: ['pipe', 'pipe', 'pipe'] });
    let said = '';
    shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (said += chunk));
    shell.stdin.write(
      [
        'PRAGMA cache_size = 1;',
        'BEGIN IMMEDIATE;',
        'CREATE TABLE "events" ("seq" integer primary key, "stream" text not null);',
        'CREATE TABLE filler (x);',
        'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200) INSERT INTO filler SELECT randomblob(4000) FROM c;',
        "SELECT 'mid-schema';",
        '',
      ].join('\n'),
    );
    await waitUntil('the shell to be inside its transaction', () => said.includes('mid-schema'));
    expect(existsSync(`${db}-journal`)).toBe(true);
    shell.kill('SIGKILL');
    expect((await exitOf(shell)).signal).toBe('SIGKILL');

    const daemon = await DaemonProcess.start(db, ['--exec', 'cat', '--budget-note', 'off']);
    const runId = await daemon.submit('A', 'hello');
    expect(await daemon.terminal(runId)).toMatchObject({ state: 'succeeded', reply: 'hello' });
    daemon.signal('SIGTERM');
    expect((await daemon.exit()).code).toBe(0);

    expect(logRows(db).some((row) => row.type === 'board.run.submitted')).toBe(true);
    // The whole schema, every migration recorded, and nothing of the dead writer's.
    const tables = new Database(db, { readonly: true });
    expect(tables.prepare("SELECT count(*) FROM sqlite_master WHERE name IN ('filler', 'kysely_migration')").pluck().get()).toBe(1);
    const fresh = join(tempDir(), 'fresh.db');
    await (await openSqliteStore(fresh)).close();
    const migrations = (file: Database.Database) => file.prepare('SELECT name FROM kysely_migration ORDER BY name').pluck().all();
    const freshTables = new Database(fresh, { readonly: true });
    expect(migrations(tables)).toEqual(migrations(freshTables));
    freshTables.close();
    tables.close();
    const replay = await runInProcess(['replay', '--db', db]);
    expect(replay.stderr).toBe('');
    expect(replay.status).toBe(0);
  });
});
