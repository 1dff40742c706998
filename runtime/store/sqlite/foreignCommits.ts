import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { Observable, share } from 'rxjs';

/** How often the log is looked at anyway while its folder is watched: a net for a change the folder did not report. */
export const WATCHED_POLL_MS = 5_000;

export interface ForeignCommitOptions {
  /** How often the log is looked at when its folder cannot be watched (no inotify watch left, a file system without them). */
  readonly pollMs: number;
  /** How often it is looked at while the folder is watched. */
  readonly watchedPollMs?: number;
}

/**
 * Another process's commits to the log file at `path` (a CLI adding a computer, a second daemon on the
 * file), as wakes (`path` null: by the poll alone). `moved` reads SQLite's data_version, which moves only when another connection
 * commits; it is read when the log's folder reports a change to one of the log's files (a commit
 * writes the WAL file: inotify on Linux, FSEvents on macOS), coalesced to one reading a turn of the
 * event loop, and every `watchedPollMs` anyway. So a daemon with nothing to do is not woken four times a
 * second to find nothing (docs/architecture.md#an-idle-process-sleeps), and another process's commit is
 * seen at once rather than within a poll. Where the folder cannot be watched, it is read every `pollMs`.
 * Real time: the other process commits in it (docs/architecture.md#real-time-waits). One watch and one
 * timer for all subscribers, while there are any.
 */
export function foreignCommits(path: string | null, moved: () => boolean, options: ForeignCommitOptions): Observable<null> {
  return new Observable<null>((subscriber) => {
    let looking = false;
    const look = () => {
      looking = false;
      if (moved()) subscriber.next(null);
    };
    const soon = () => {
      if (looking) return;
      looking = true;
      setImmediate(look);
    };
    let poll: NodeJS.Timeout | null = null;
    const pollEvery = (ms: number) => {
      if (poll !== null) clearInterval(poll);
      poll = setInterval(look, ms);
    };
    let watcher: FSWatcher | null = null;
    const unwatched = () => {
      watcher?.close();
      watcher = null;
      pollEvery(options.pollMs);
    };
    try {
      if (path === null) throw new Error('not watched');
      const logFiles = basename(path);
      // The folder rather than the WAL file: SQLite deletes and makes the WAL file again (the last connection's close).
      watcher = watch(dirname(path), { persistent: false }, (_change, name) => {
        if (name === null || name.startsWith(logFiles)) soon();
      });
      watcher.on('error', unwatched);
      pollEvery(Math.max(options.pollMs, options.watchedPollMs ?? WATCHED_POLL_MS));
    } catch {
      unwatched();
    }
    return () => {
      watcher?.close();
      if (poll !== null) clearInterval(poll);
    };
  }).pipe(share());
}
