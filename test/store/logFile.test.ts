import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { appendOrThrow } from '../../events/store/eventStore.ts';
import { LogUnwritableError } from '../../events/store/logUnwritable.ts';
import { openSqliteStore } from '../../events/store/sqlite/sqliteEventStore.ts';
import { bumped } from '../support/events.ts';
import { openTempStore, tempDbPath, tempDir } from '../support/tempStore.ts';

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** A read-only file system of its own (root only): the truest read-only log there is. */
function readOnlyMount(): string | null {
  if (process.getuid?.() !== 0) return null;
  const dir = tempDir();
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', dir], { stdio: 'pipe' });
  } catch {
    return null;
  }
  onTestFinished(() => void execFileSync('umount', [dir]));
  return dir;
}

describe('the log file', () => {
  it('is created mode 0600, and so are its WAL and shared-memory files (they hold prompts and replies)', async () => {
    const path = tempDbPath();
    const store = await openTempStore(path);
    await appendOrThrow(store, { expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

    expect(modeOf(path)).toBe(0o600);
    expect(existsSync(`${path}-wal`)).toBe(true);
    expect(modeOf(`${path}-wal`)).toBe(0o600);
    expect(modeOf(`${path}-shm`)).toBe(0o600);
  });

  it('that exists with a mode others can read is made 0600 when the log is opened for writing', async () => {
    const path = tempDbPath();
    const first = await openSqliteStore(path);
    await appendOrThrow(first, { expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    await first.close();
    chmodSync(path, 0o644);

    await openTempStore(path);

    expect(modeOf(path)).toBe(0o600);
  });

  it('given as a folder is refused with an error naming the path and the cause', async () => {
    const folder = tempDir();

    const opening = openSqliteStore(folder);

    await expect(opening).rejects.toBeInstanceOf(LogUnwritableError);
    await expect(opening).rejects.toThrow(`the log ${folder} cannot be written: the file cannot be opened (EISDIR: it is a folder, not a file)`);
  });

  it('whose folder cannot be made (a file is in its way) is refused with an error naming the path and the cause', async () => {
    const blocker = join(tempDir(), 'not-a-folder');
    writeFileSync(blocker, '');
    const path = join(blocker, 'x.db');

    const opening = openSqliteStore(path);

    await expect(opening).rejects.toBeInstanceOf(LogUnwritableError);
    await expect(opening).rejects.toThrow(new RegExp(`^the log ${path} cannot be written: the file cannot be opened \\(ENOTDIR`));
  });

  it('on a read-only file system is refused with an error naming the path and the cause', async (t) => {
    const dir = readOnlyMount();
    if (dir === null) return t.skip('needs root and a tmpfs mount to make a read-only file system');
    const path = join(dir, 'x.db');

    const opening = openSqliteStore(path);

    await expect(opening).rejects.toBeInstanceOf(LogUnwritableError);
    await expect(opening).rejects.toThrow(new RegExp(`^the log ${path} cannot be written: the file or its folder is read-only`));
  });

  it('that is a read-only file is refused with an error naming the path and the cause', async (t) => {
    if (process.getuid?.() === 0) return t.skip('root writes a 0400 file anyway; the read-only file system case covers it');
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'x.db');
    await (await openSqliteStore(path)).close();
    chmodSync(path, 0o400);

    await expect(openSqliteStore(path)).rejects.toThrow(new RegExp(`^the log ${path} cannot be written: the file or its folder is read-only`));
  });
});
