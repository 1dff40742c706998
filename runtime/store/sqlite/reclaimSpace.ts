import type Database from 'better-sqlite3';

/** Pages given back a step; the daemon's other work gets the event loop between steps. */
const PAGES_A_STEP = 2000;

/**
 * The indexes whose keys are spread over the whole log (run ids, stream names): removing a prefix of
 * seqs leaves their pages part-empty everywhere, and freeing whole pages gives none of that back.
 */
const SPREAD_INDEXES = ['sqlite_autoindex_events_1', 'events_run_id', 'events_stream_id', 'events_session_id'];

/** A live file up to this size has its spread indexes rebuilt after a cut: a fifth of a second at 6 MB, a few seconds here. */
export const REPACK_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Rebuilds the spread indexes packed, one at a time with the event loop between them, after a cut
 * (docs/retention.md#the-files-size): about a seventh of a live file the cuts have trimmed. Each
 * rebuild holds the log while it runs, in time linear in its size, so a file larger than
 * REPACK_MAX_BYTES keeps its part-empty pages (they are reused by the runs that follow). Returns
 * whether it ran; the pages it frees are given back by reclaimFreePages.
 */
export async function repackSpreadIndexes(db: Database.Database): Promise<boolean> {
  const bytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
  if (bytes > REPACK_MAX_BYTES) return false;
  const present = new Set(db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'").pluck().all());
  for (const index of SPREAD_INDEXES.filter((i) => present.has(i))) {
    db.exec(`REINDEX ${index}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return true;
}

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
