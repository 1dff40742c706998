import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCli } from '../e2e/support/cluster.ts';
import { scenarioCopy } from '../replay/scenarioLog.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';

const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Every read-only tool, pointed at `path` (with `all`, each way of reading too). */
const tools = (path: string, all = false) => [
  ['audit', '--db', path],
  ['replay', '--db', path],
  ['rebuild', '--db', path],
  ...(all
    ? [
        ['audit', 'r1', '--db', path],
        ['replay', '--db', path, '--until', '3'],
        ['replay', '--db', path, '--run', 'r1'],
      ]
    : []),
];

/** Another program's SQLite file, in rollback-journal mode as most are. */
function foreignSqlite(): string {
  const path = join(tempDir(), 'other.db');
  const db = new Database(path);
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('keep me')");
  db.close();
  return path;
}

describe('read-only tools (replay, rebuild, audit) never write the file they read', () => {
  it('given another program’s SQLite file, then each refuses it naming the path, and the file is unchanged byte for byte', async () => {
    const path = foreignSqlite();
    const before = digest(path);

    for (const args of tools(path, true)) {
      const result = await runInProcess(args);
      expect(result.status, args.join(' ')).not.toBe(0);
      expect(result.status, args.join(' ')).toBeLessThanOrEqual(2);
      expect(result.stderr, args.join(' ')).toContain(`${path} is not a runledger log`);
      expect(result.stderr, args.join(' ')).toContain('no events table');
    }

    // Nor does a tool that writes a log it expects to be there, before it has checked that it is one.
    const write = await runInProcess(['rebuild', '--write', '--db', path]);
    expect(write.status).toBe(2);
    expect(write.stderr).toContain(`${path} is not a runledger log`);

    expect(digest(path)).toBe(before);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('through the real entry point, each tool refuses another program’s file with its exit status and message, and leaves it as it was', async () => {
    const path = foreignSqlite();
    const before = digest(path);

    const results = await Promise.all(tools(path).map(async (args) => ({ args, ...(await runCli(args)) })));
    for (const { args, status, stderr } of results) {
      expect(status, args.join(' ')).toBe(args[0] === 'audit' ? 1 : 2);
      expect(stderr, args.join(' ')).toContain(`runledger: ${path} is not a runledger log`);
    }
    expect(digest(path)).toBe(before);
  });

  it('given a file that is not SQLite at all, or none, then each names it', async () => {
    const dir = tempDir();
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'just some words, not a database\n'.repeat(200));
    const missing = join(dir, 'nothing-here.db');

    for (const args of [...tools(text), ...tools(missing)]) {
      const result = await runInProcess(args);
      expect(result.status, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toContain(args.includes(text) ? `${text} is not a runledger log` : `there is no log at ${missing}`);
    }
    expect(readFileSync(text, 'utf8')).toBe('just some words, not a database\n'.repeat(200));
    expect(existsSync(missing)).toBe(false);
  });

  it('given a log whose schema is newer than this version knows, then each refuses it, saying so', async () => {
    const path = scenarioCopy();
    const db = new Database(path);
    db.prepare("INSERT INTO kysely_migration (name, timestamp) VALUES ('0099_from_the_future', '2030-01-01T00:00:00.000Z')").run();
    db.close();

    for (const args of tools(path)) {
      const result = await runInProcess(args);
      expect(result.status, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toContain(
        `${path} is not a runledger log this version can read: its schema is newer than this runledger knows (0099_from_the_future)`,
      );
    }
  });

  it('given a runledger log, then replay, audit and rebuild read it and leave it as it was, byte for byte', async () => {
    const path = scenarioCopy();
    const before = digest(path);

    for (const args of tools(path, true)) expect((await runInProcess(args)).status, args.join(' ')).toBe(0);

    expect(digest(path)).toBe(before);
  });
});
