import { closeSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';

/**
 * A consistent copy of a live log in `target`, as of one moment: `VACUUM INTO` reads the whole log in
 * one read transaction, so the writers (a running daemon) go on meanwhile and the copy holds every
 * commit before that moment and none after. (SQLite's online backup API restarts whenever another
 * process writes, which a busy daemon may do for ever.) The copy is made beside `target` under another
 * name, owner-only like the log (it holds prompts and replies), flushed to disk, then renamed: `target`
 * is never half a copy, and a copy that was said to be made survives a power loss.
 */
export function copyLog(db: Database.Database, target: string): void {
  const staged = `${target}.${process.pid}.partial`;
  // VACUUM INTO wants a new or empty file; made here first so that it is born 0600.
  closeSync(openSync(staged, 'wx', 0o600));
  try {
    db.prepare('VACUUM INTO ?').run(staged);
    flush(staged);
    renameSync(staged, target);
    flush(dirname(target));
  } finally {
    rmSync(staged, { force: true });
  }
}

function flush(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
