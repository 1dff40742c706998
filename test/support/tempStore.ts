import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore, type SqliteEventStore, type SqliteStoreOptions } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { whenTestEnds } from './testScope.ts';

/** A fresh folder under the OS temp dir, removed when the test ends (test/support/testScope.ts says which). */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'runledger-test-'));
  whenTestEnds(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The path of a log file that does not exist yet, in a folder of its own. */
export function tempDbPath(): string {
  return join(tempDir(), 'runledger.db');
}

/** A real SQLite store on a file (a new one unless `path` is given), closed when the current test ends. */
export async function openTempStore(path: string = tempDbPath(), options: SqliteStoreOptions = {}): Promise<SqliteEventStore> {
  const store = await openSqliteStore(path, options);
  whenTestEnds(() => store.close());
  return store;
}
