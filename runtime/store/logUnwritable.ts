import { codeOf } from '../../events/thrown.ts';

/** Why the log could not be written, in words a user can act on. */
export type UnwritableCause = 'disk_full' | 'read_only' | 'io_error' | 'cannot_open' | 'not_permitted' | 'locked' | 'unreachable';

const WORDS: Record<UnwritableCause, string> = {
  disk_full: 'the disk is full',
  read_only: 'the file or its folder is read-only',
  io_error: 'an I/O error',
  cannot_open: 'the file cannot be opened',
  not_permitted: 'permission denied',
  locked: 'it is locked by another process',
  unreachable: 'its database server cannot be reached',
};

/**
 * The log refused a write for a reason of the machine, not of the data (disk full, read-only file,
 * I/O error, another process holding its lock): nothing of the write was kept, and the same write may succeed once the machine is
 * fixed. Names the file and the cause; `code` is the one SQLite or the OS gave.
 */
export class LogUnwritableError extends Error {
  override readonly name = 'LogUnwritableError';
  constructor(
    readonly path: string,
    readonly reason: UnwritableCause,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(`the log ${path} cannot be written: ${WORDS[reason]} (${code}${detailOf(code, options?.cause)})`, options);
  }

  /** The cause without the file's path: what a remote caller may be told. */
  get publicReason(): string {
    return `the log cannot be written: ${WORDS[this.reason]}`;
  }
}

function detailOf(code: string, cause: unknown): string {
  // Node's errno messages start with their code ("EROFS: read-only file system, open ..."): said once.
  const message = cause instanceof Error ? cause.message.replace(new RegExp(`^${code}: `), '') : '';
  return message ? `: ${message}` : '';
}

/**
 * The cause of a failed write when it is one of the machine's (better-sqlite3's SqliteError codes,
 * Node's errno codes), else null: a bug or a bad input stays the error it is.
 */
function unwritableCauseOf(error: unknown): UnwritableCause | null {
  const code = codeOf(error);
  if (code === null) return null;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return 'disk_full';
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') return 'read_only';
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO') return 'io_error';
  if (code.startsWith('SQLITE_CANTOPEN') || code === 'EISDIR' || code === 'ENOTDIR') return 'cannot_open';
  // Another process holds the file's write lock (a `sqlite3` shell inside BEGIN IMMEDIATE, a backup
  // tool) past the store's short busy wait: nothing was written, and the write goes through once it lets go.
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'locked';
  if (code === 'SQLITE_PERM' || code.startsWith('SQLITE_AUTH') || code === 'EACCES' || code === 'EPERM') return 'not_permitted';
  return null;
}

/** `error` as a LogUnwritableError naming `path` when it is one of the machine's, else `error` unchanged. */
export function asLogUnwritable(error: unknown, path: string): unknown {
  if (error instanceof LogUnwritableError) return error;
  const cause = unwritableCauseOf(error);
  return cause === null ? error : new LogUnwritableError(path, cause, codeOf(error)!, { cause: error });
}

/**
 * A store's writes failing for a reason of the machine, from the first commit that fails so until one
 * goes through: its start and its end each told once on the store's `report`, whatever the dialect.
 */
export class WriteOutage {
  /** The failure that began the outage; null while commits go through. */
  current: LogUnwritableError | null = null;

  constructor(
    /** The log as a message names it: a file's path, a URL without its password. */
    private readonly where: string,
    private readonly report: (line: string) => void,
  ) {}

  /**
   * A commit failed with `error`: the first LogUnwritableError of an outage is told, `why` adding what
   * is known of its cause (asked only then: it may look at the machine).
   */
  failed(error: unknown, why: () => string = () => ''): void {
    if (!(error instanceof LogUnwritableError) || this.current !== null) return;
    this.current = error;
    this.report(`${error.message}${why()}; what must be recorded waits and is retried, requests are answered 507 until it can be written again`);
  }

  /** A commit wrote events: the outage, if there was one, is over. */
  committed(): void {
    if (this.current === null) return;
    this.report(`the log ${this.where} can be written again (${this.current.code} is over): what waited is being recorded`);
    this.current = null;
  }
}
