import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { codeOf } from '../../events/thrown.ts';
import { isProcessAlive } from '../../runtime/actors/processes.ts';

/**
 * One daemon per computer id per log file (docs/rules.md#computer-behaviour, "Restart"): a lock file holding the
 * owner's pid. A lock whose process is gone is taken over; a live one refuses the newcomer.
 */
export function takeProcessLock(path: string, what: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return () => {
        try {
          if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path);
        } catch {
          // ENOENT: gone already. Whatever else keeps the file there, the next start finds its pid dead
          // and takes it over: nothing is left to do about it on the way out.
        }
      };
    } catch (error) {
      if (codeOf(error) !== 'EEXIST') throw error;
      const owner = Number(readFileSync(path, 'utf8').trim());
      if (isProcessAlive(owner) && owner !== process.pid) {
        throw new Error(`${what} is already running (pid ${owner}, lock ${path}); stop it first`);
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not take the lock ${path}`);
}

/** The board's lock: one board per log folder (its token and secret live there). */
export function boardLockPath(db: string): string {
  return join(dirname(db), 'board.lock');
}

/** The pid holding the lock at `path` while that process lives; null when nobody holds it. */
export function lockHolder(path: string): number | null {
  let owner: number;
  try {
    owner = Number(readFileSync(path, 'utf8').trim());
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return null;
    throw error;
  }
  return Number.isSafeInteger(owner) && owner > 0 && isProcessAlive(owner) ? owner : null;
}

/**
 * The lock of computer `id` on the log `db`: beside the log and named after it, so two logs in one
 * folder are two computers, while two daemons on one log as one id are refused.
 */
export function computerLockPath(db: string, id: string): string {
  return `${db}.computer-${id}.lock`;
}
