import { readFileSync, statSync } from 'node:fs';

/**
 * Which other processes hold a WAL-mode log's locks, read from Linux's /proc/locks: a line that tells
 * the user whose transaction to end ("pid 4242 (sqlite3)") instead of only that the log is locked.
 * In WAL mode SQLite locks bytes of the `-shm` file with POSIX locks (sqlite3.c, WALINDEX_LOCK_OFFSET):
 * byte 120 is the write lock, bytes 123 to 127 the read marks a reader holds for its snapshot.
 * Elsewhere (no /proc, no -shm yet) the answer is empty and the line just says the log is locked.
 */
const WRITE_LOCK_BYTE = 120;
const READ_MARK_BYTES = [123, 127] as const;

export interface LockHolder {
  readonly pid: number;
  /** Its program's name (`/proc/<pid>/comm`), or null when it cannot be read. */
  readonly command: string | null;
}

/** The other processes holding the log's write lock. */
export function writeLockHolders(db: string): LockHolder[] {
  return holdersOf(db, WRITE_LOCK_BYTE, WRITE_LOCK_BYTE);
}

/** The other processes holding a read mark of the log: readers whose open transaction keeps old WAL frames alive. */
export function readerHolders(db: string): LockHolder[] {
  return holdersOf(db, READ_MARK_BYTES[0], READ_MARK_BYTES[1]);
}

/** "pid 4242 (sqlite3), pid 4300 (python3)"; empty when nobody was found. */
export function describeHolders(holders: readonly LockHolder[]): string {
  return holders.map((h) => `pid ${h.pid}${h.command ? ` (${h.command})` : ''}`).join(', ');
}

function holdersOf(db: string, from: number, to: number): LockHolder[] {
  let inode: number;
  let locks: string;
  try {
    inode = statSync(`${db}-shm`).ino;
    locks = readFileSync('/proc/locks', 'utf8');
  } catch {
    return [];
  }
  const pids = new Set<number>();
  for (const line of locks.split('\n')) {
    // "1: POSIX  ADVISORY  WRITE 4242 fd:01:1835140 120 120"; a waiter's line has "->" after its number.
    const fields = line.trim().split(/\s+/);
    if (fields[1] !== 'POSIX' || fields.length < 8) continue;
    const [pid, file, start, end] = [Number(fields[4]), fields[5]!, Number(fields[6]), fields[7] === 'EOF' ? Infinity : Number(fields[7])];
    if (Number(file.split(':')[2]) !== inode || pid === process.pid || pid <= 0) continue;
    if (start <= to && end >= from) pids.add(pid);
  }
  return [...pids].sort((a, b) => a - b).map((pid) => ({ pid, command: commandOf(pid) }));
}

function commandOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() || null;
  } catch {
    return null;
  }
}
