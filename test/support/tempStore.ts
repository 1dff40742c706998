import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openSqliteStore, type SqliteEventStore, type SqliteStoreOptions } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { whenTestEnds } from './testScope.ts';

/** A fresh folder under the OS temp dir, removed when the test ends (test/support/testScope.ts says which). */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'runledger-test-'));
  whenTestEnds(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Fresh folders for the tests of a file that run at once (describe.concurrent), made under one of the
 * file's and removed after them all. tempDir() serves them only in a body wrapped in ownScope(): else it
 * removes its folder when "the current test" ends, which under concurrency is whichever started last.
 * Called at the file's top level.
 */
export function concurrentTempDirs(): () => string {
  let root: string | null = null;
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });
  return () => {
    root ??= mkdtempSync(join(tmpdir(), 'runledger-test-'));
    return mkdtempSync(join(root, 'case-'));
  };
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
