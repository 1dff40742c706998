import type Database from 'better-sqlite3';

/** Pages given back a step; the daemon's other work gets the event loop between steps. */
const PAGES_A_STEP = 2000;

/**
 * Gives the pages of the rows retention removed back to the file system (docs/retention.md#the-files-size):
 * SQLite keeps a deleted row's pages in the file for reuse, so without this the live log stays as large as
 * it ever was (N days and the day that came before the cut), never N days. A log made before retention
 * ran has no incremental vacuum: it is turned on once, by a VACUUM that rewrites the file just after a cut,
 * when it is smallest. After that each round moves the free pages to the end and truncates, a step at a
 * time. Then the WAL, which took the moved pages, is checkpointed and truncated. Returns the bytes freed.
 */
export async function reclaimFreePages(db: Database.Database): Promise<number> {
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const pages = () => db.pragma('page_count', { simple: true }) as number;
  const free = () => db.pragma('freelist_count', { simple: true }) as number;
  if (free() === 0) return 0;
  const before = pages();
  if (db.pragma('auto_vacuum', { simple: true }) !== 2) {
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('VACUUM');
  } else {
    while (free() > 0) {
      db.pragma(`incremental_vacuum(${PAGES_A_STEP})`);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  // A reader (a tool, a follower) may hold the WAL: then it is truncated at a later checkpoint.
  db.pragma('wal_checkpoint(TRUNCATE)');
  return (before - pages()) * pageSize;
}
