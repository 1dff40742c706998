import { accessSync, chmodSync, closeSync, constants, mkdirSync, openSync, type Stats, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { codeOf, messageOf } from '../../../events/thrown.ts';
import { asLogUnwritable, LogUnwritableError } from '../logUnwritable.ts';

/** Only the owner may read the log: it holds prompts and replies (docs/rules.md#the-log). */
const PRIVATE = 0o600;
/** SQLite's companions of a WAL-mode log; SQLite creates them with the log's own mode. */
const COMPANIONS = ['-wal', '-shm'];

/**
 * Makes the log's folder and file ready for SQLite: the file is created 0600 before SQLite sees it
 * (SQLite then gives its WAL and shared memory the same mode), and an existing log or companion that
 * others can read is narrowed to its owner. A folder given as the log, or a folder that cannot be
 * made, or a file or folder this process may not write, is refused naming the path and why, rather
 * than with SQLite's "unable to open database file" (or, for a read-only file, at the first write).
 */
export function prepareLogFile(path: string): void {
  const folder = dirname(path);
  try {
    mkdirSync(folder, { recursive: true });
  } catch (error) {
    // mkdir -p answers EEXIST when a file stands where a folder of the path should be.
    if (codeOf(error) === 'EEXIST') throw new LogUnwritableError(path, 'cannot_open', 'ENOTDIR', { cause: new Error(`${folder} is not a folder`) });
    throw asLogUnwritable(error, path);
  }
  const existing = statOrNull(path);
  if (existing?.isDirectory()) throw new LogUnwritableError(path, 'cannot_open', 'EISDIR', { cause: new Error('it is a folder, not a file') });
  if (existing === null) {
    try {
      closeSync(openSync(path, 'a', PRIVATE));
    } catch (error) {
      throw asLogUnwritable(error, path);
    }
  }
  // SQLite opens a file it may not write read-only without a word, and fails only at the first write;
  // the folder must take the WAL's companions. Both are checked now, while the path can be named.
  for (const target of [path, folder]) {
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      throw asLogUnwritable(error, path);
    }
  }
  for (const file of [path, ...COMPANIONS.map((suffix) => path + suffix)]) narrowToOwner(file);
}

function narrowToOwner(file: string): void {
  const stat = statOrNull(file);
  if (stat === null || (stat.mode & 0o077) === 0) return;
  try {
    chmodSync(file, stat.mode & 0o700);
  } catch (error) {
    // Someone else's file (or a read-only one): the log still opens, and the user is told once.
    process.emitWarning(`the log file ${file} is readable by others and could not be made 0600: ${messageOf(error)}`);
  }
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return null;
    throw asLogUnwritable(error, path);
  }
}
