import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { Observable, share } from 'rxjs';

/** How often the log is looked at anyway while its folder is watched: a net for a change the folder did not report. */
export const WATCHED_POLL_MS = 5_000;

/** How long after a report that found no commit the log is looked at once more. */
const LOOK_AGAIN_MS = 50;

export interface ForeignCommitOptions {
  /** How often the log is looked at when its folder cannot be watched (no inotify watch left, a file system without them). */
  readonly pollMs: number;
  /** How often it is looked at while the folder is watched. */
  readonly watchedPollMs?: number;
}

/**
 * Another process's commits to the log file at `path` (a CLI adding a computer, a second daemon on the
 * file), as wakes. `moved` reads SQLite's data_version, which moves only when another connection
 * commits; it is read when the log's folder reports a change to one of the log's files (a commit writes
 * the WAL file: inotify on Linux, FSEvents on macOS), once for a burst of reports, and every
 * `watchedPollMs` anyway. So a daemon with nothing to do is not woken four times a second to find
 * nothing (docs/architecture.md#an-idle-process-sleeps), and another process's commit is seen at once
 * rather than within a poll. Where the folder cannot be watched (or `path` is null), it is read every
 * `pollMs`. Real time: the other process commits in it (docs/architecture.md#real-time-waits). One watch
 * and one timer for all subscribers, while there are any.
 */
export function foreignCommits(path: string | null, moved: () => boolean, options: ForeignCommitOptions): Observable<null> {
  return new Observable<null>((subscriber) => {
    let looking = false;
    let again: NodeJS.Timeout | null = null;
    const look = () => {
      looking = false;
      if (moved()) subscriber.next(null);
    };
    // The WAL's frames are written before the commit is published (in the WAL's index, shared memory the
    // folder does not report): a look between the two finds nothing, so a report is looked at once more.
    const lookTwice = () => {
      looking = false;
      if (moved()) return subscriber.next(null);
      if (again !== null) return;
      again = setTimeout(() => {
        again = null;
        look();
      }, LOOK_AGAIN_MS);
    };
    let poll: NodeJS.Timeout | null = null;
    const pollEvery = (ms: number) => {
      if (poll !== null) clearInterval(poll);
      poll = setInterval(look, ms);
    };
    const watcher =
      path === null
        ? null
        : watchLogFiles(
            path,
            () => {
              if (looking) return;
              looking = true;
              setImmediate(lookTwice);
            },
            () => pollEvery(options.pollMs),
          );
    pollEvery(watcher ? Math.max(options.pollMs, options.watchedPollMs ?? WATCHED_POLL_MS) : options.pollMs);
    return () => {
      watcher?.close();
      if (poll !== null) clearInterval(poll);
      if (again !== null) clearTimeout(again);
    };
  }).pipe(share());
}

/**
 * Watches the folder of the log at `path` for changes to the log's files (the folder rather than the
 * WAL file: SQLite deletes the WAL file and makes it again, at the last connection's close). Null where
 * the folder cannot be watched; `lost` if the watch fails later (it is closed then).
 */
function watchLogFiles(path: string, changed: () => void, lost: () => void): FSWatcher | null {
  const logFiles = basename(path);
  try {
    const watcher = watch(dirname(path), { persistent: false }, (_change, name) => {
      if (name === null || name.startsWith(logFiles)) changed();
    });
    watcher.on('error', () => {
      watcher.close();
      lost();
    });
    return watcher;
  } catch {
    return null;
  }
}
