import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { appendOrThrow } from '../../runtime/store/eventStore.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import { openSqliteStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { repoRoot } from '../e2e/support/cluster.ts';
import { counterCodec } from '../fixtures/counter/counterEvents.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { builtScript } from '../support/builtScripts.ts';
import { bumped } from '../support/events.ts';
import { tempDbPath, tempDir } from '../support/tempStore.ts';

const modeOf = (path: string) => statSync(path).mode & 0o777;
const NOBODY = 65534;

/** Opens the log at `path` in a child process running as nobody; returns what the open said. */
function openAsNobody(path: string): string {
  const script = `import { openSqliteStore } from ${JSON.stringify(builtScript('runtime/store/sqlite/sqliteEventStore.ts'))};
    await openSqliteStore(process.argv[1]).then(() => console.log('opened'), (e) => console.log(e.name + ': ' + e.message));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script, path], {
    uid: NOBODY,
    gid: NOBODY,
    cwd: repoRoot,
    encoding: 'utf8',
  });
  return `${child.stdout}${child.stderr}`.trim();
}

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
    const store = await openCounterStore(path);
    await appendOrThrow(store, { expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

    expect(modeOf(path)).toBe(0o600);
    expect(existsSync(`${path}-wal`)).toBe(true);
    expect(modeOf(`${path}-wal`)).toBe(0o600);
    expect(modeOf(`${path}-shm`)).toBe(0o600);
  });

  it('that exists with a mode others can read is made 0600 when the log is opened for writing', async () => {
    const path = tempDbPath();
    const first = await openSqliteStore(path, { codec: counterCodec });
    await appendOrThrow(first, { expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    await first.close();
    chmodSync(path, 0o644);

    await openCounterStore(path);

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

  it('that is a read-only file (mode 0400) is refused with an error naming the path and the cause', async () => {
    const dir = tempDir();
    const path = join(dir, 'x.db');
    await (await openSqliteStore(path)).close();
    chmodSync(path, 0o400);
    // Root writes a 0400 file anyway: as root, the log is opened by a child that runs as nobody.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      chmodSync(dir, 0o777);
      chownSync(path, NOBODY, NOBODY);
    }

    const error = asRoot
      ? openAsNobody(path)
      : await openSqliteStore(path).then(
          () => 'opened',
          (e: Error) => `${e.name}: ${e.message}`,
        );

    expect(error).toMatch(
      new RegExp(`^LogUnwritableError: the log ${path} cannot be written: permission denied \\(EACCES: permission denied, access '${path}'\\)$`),
    );
  });
});
