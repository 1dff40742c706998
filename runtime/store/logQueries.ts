import type { ComputerEvents } from './computerEvents.ts';
import type { FoldRow } from './eventStore.ts';
import type { ForeignRowPolicy } from './rowDecoder.ts';
import type { Stretch } from './sqlite/startingCheckpoints.ts';

/**
 * The log as the tools that look at it read it (`audit`, `show`, `replay`, the web view, a run id's
 * prefix looked up): queries no actor, outbox or fold decides from, kept out of the EventStore they
 * depend on. Both stores implement it; `openStore` hands out a store that is both.
 */
export interface LogQueries {
  /**
   * Ids of the entities of `kind` (e.g. `run`) whose id starts with `prefix`, sorted, at most `limit`:
   * those with a stream of their own and those only named in events' data, as `readEntity` finds them;
   * read through the same indexes, a range of them, never a scan of the log.
   */
  entityIdsStartingWith(kind: 'run' | 'session', prefix: string, limit: number): Promise<string[]>;
  /**
   * Hands `visit` each row with `seq > after`, in order, at most `limit` of them, as stored (its data
   * still JSON text) and without the columns no fold reads (`version`, `actor`): for a reader of
   * millions of rows that decodes only what it needs (`replay`). The row object is reused: `visit`
   * must copy what it keeps, and must not use the store. Returns how many rows it visited.
   */
  scanRows(after: number, limit: number, visit: (row: FoldRow) => void): Promise<number>;
  /**
   * The events computers reported to this log's boards, in tables of their own beside the log
   * (docs/architecture.md); null where there are none to read (a SQLite file opened read-only that
   * never had any).
   */
  reportedEvents(options?: { foreignRows?: ForeignRowPolicy }): ComputerEvents | null;
  /**
   * What a log kept in a file of its own offers the tools (a SQLite log: its archives beside it, a copy
   * taken while it is written); null for a log in a database server. Callers ask this, never the store's class.
   */
  readonly logFile: LogFile | null;
}

/** A log that is one file on this machine (SQLite), and what the tools do with it as a file. */
export interface LogFile {
  /** The file's path, as it was opened. */
  readonly path: string;
  /** The folder its archived segments are kept in (docs/retention.md). */
  readonly archiveFolder: string;
  /** Each stretch of the history still there, from its starting checkpoint: what `replay` re-derives of a log cut by retention. */
  replayStretches(): Stretch[];
  /** A consistent copy of the log in `target`, taken while others write it (`backup`). */
  copyTo(target: string): void;
}
