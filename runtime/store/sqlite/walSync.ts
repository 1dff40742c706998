import { statSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Faults a test injects into the fsync of a log's commits (never set in production): `syncWal` is
 * awaited before each real fsync, so a test can make one slow (a promise it settles) or fail (an
 * error it returns is thrown as the fsync's own).
 */
export interface SyncFaults {
  syncWal?(): Promise<Error | null> | Error | null;
}

/**
 * The fsync that makes a WAL-mode log's commits durable, off the main thread. The connection commits
 * with `synchronous=NORMAL` (in WAL mode that syncs only at checkpoints, and never corrupts the file);
 * this then `fdatasync`s the WAL file on libuv's thread pool. On Linux an fsync of any fd of a file
 * flushes the file, whoever wrote it, so it covers every commit in the WAL when it begins. WAL frames
 * are checksummed in a chain, so recovery keeps a prefix: a later commit is never durable without an
 * earlier one.
 *
 * The fd synced must be the live WAL: SQLite deletes the WAL when the last connection closes and
 * makes a new one at the next open (another process's, or a tool's), so each sync checks the path's
 * inode and reopens on a change. A checkpoint that truncates or restarts the WAL keeps its inode,
 * and it syncs the database file itself before it gives up a frame, so what it took is on disk.
 */
export class WalSync {
  private file: FileHandle | null = null;
  private inode = -1;
  private done = 0;

  constructor(
    /** The log's WAL: `<db>-wal`. */
    readonly path: string,
    private readonly faults?: SyncFaults,
  ) {}

  /** How many fsyncs this has done (the WAL's, and its folder's once a new WAL is opened): for the benches. */
  get fsyncs(): number {
    return this.done;
  }

  /** Resolves once every commit made before the call is on disk; rejects with the fsync's error. */
  async sync(): Promise<void> {
    const injected = await this.faults?.syncWal?.();
    if (injected) throw injected;
    const file = this.file ?? (await this.open());
    // The path's inode is read once the fsync ended, not before it: a WAL made again meanwhile is seen and
    // synced too. Read on the main thread (a stat of a cached path is a few microseconds): the promise
    // API's stat beside the fsync cost the daemon 0.4 ms of its own CPU a commit (bench/profileEmbedded.ts).
    await file.datasync();
    const { ino } = statSync(this.path);
    this.done++;
    if (ino === this.inode) return;
    await (await this.open()).datasync();
    this.done++;
  }

  async close(): Promise<void> {
    const file = this.file;
    this.file = null;
    this.inode = -1;
    await file?.close();
  }

  /** The WAL as the path names it now, its folder synced: a new WAL's name must reach the disk too. */
  private async open(): Promise<FileHandle> {
    await this.close();
    const file = await open(this.path, 'r');
    try {
      this.inode = (await file.stat()).ino;
      // Or a power cut loses the file and every commit in it: SQLite syncs the folder of a file it
      // created only at the file's first sync, which `NORMAL` never does before a checkpoint.
      await syncFolder(dirname(this.path));
      this.done++;
    } catch (error) {
      await file.close();
      this.inode = -1;
      throw error;
    }
    this.file = file;
    return file;
  }
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
