import type { Observable } from 'rxjs';
import type { DomainEvent } from '../../events/catalog.ts';
import type { EventRow } from '../../events/codec.ts';
import type { NewEvent, StoredEvent } from '../../events/envelope.ts';
import type { LogQueries } from './logQueries.ts';
import type { LogUnwritableError } from './logUnwritable.ts';

/** A row as a fold reads it: the log's bookkeeping (`version`, `actor`) left out. */
export type FoldRow = Omit<EventRow, 'version' | 'actor'>;

/** A store as `openStore` hands it out: the log the actors use, and the queries the tools read it with. */
export type OpenedLog = EventStore & LogQueries;

/**
 * The log, as every actor, outbox and projection sees it (the tools' queries besides are LogQueries).
 * Nothing outside `runtime/store/sqlite/` knows it is SQLite: a PostgreSQL store (kysely's Postgres
 * dialect) serves this interface unchanged.
 */
export interface EventStore {
  /**
   * Appends `events` atomically if every stream in `expected` is still at its expected version
   * (0: the stream must not exist yet; 'any': no check). Every stream written must be named in
   * `expected`. Appends made in one turn of the event loop commit in one transaction (group commit)
   * yet each is checked and refused on its own.
   */
  append(request: AppendRequest): Promise<AppendResult>;
  /**
   * Asks the group commit to wait for appends still to come (an actor with more inputs in its mailbox
   * than it has decided): until the returned release is called, a batch is committed only once it is
   * full or a few milliseconds old.
   */
  holdCommits(): () => void;
  /**
   * Why the log cannot be written now (a full disk, a lock another process holds, a server down): set
   * by a commit that failed for a reason of the machine, null again once one goes through.
   */
  unwritable(): LogUnwritableError | null;
  /**
   * Events with `seq > after`, in order, at most `limit` of them. Every read of events (this one, the
   * streams, entities, subscriptions, LogQueries') skips a row this version cannot read and names it once, unless
   * the store was opened to fail on them: so `limit` events may span more than `limit` seqs.
   */
  readAll(after: number, limit: number): Promise<DomainEvent[]>;
  /** Events of one stream with `version > after`, in order. */
  readStream(stream: string, after?: number): Promise<DomainEvent[]>;
  /**
   * Every event of one entity, `kind:id` (e.g. `run:r1`), across all owners (the board's `run:r1`, a
   * computer's `c1/run:r1`), in seq order; read through an index, never a scan of the log.
   */
  readEntity(kindAndId: string): Promise<DomainEvent[]>;
  /** The last event of a stream, or null when it has none. */
  lastOfStream(stream: string): Promise<DomainEvent | null>;
  streamVersion(stream: string): Promise<number>;
  headSeq(): Promise<number>;
  /**
   * Every event with `seq > after`: first those already in the log, then each new one as it commits
   * (in this process at once; in another as soon as the store hears of it: a SQLite log's folder reports
   * it, PostgreSQL's NOTIFY, or within the store's poll), none lost or repeated at the seam.
   */
  subscribe(after: number): Observable<DomainEvent>;
  readonly checkpoints: CheckpointStore;
  /** Older states of the projections (and of the deciders, for `replay`), kept at intervals of the log. */
  readonly snapshots: SnapshotStore;
  /** `host:pid` written in the `actor` column. */
  readonly writer: string;
  /** Resolves once every append taken so far has committed (or failed): a reader after it sees them. */
  settle(): Promise<void>;
  /**
   * What a log that several boards share offers them (PostgreSQL: the tables their lease and beats
   * live in, the secret they all sign run tokens with); null for a log one board holds (a SQLite file,
   * held by its lock file). Callers ask this, never the store's class.
   */
  readonly sharedLog: SharedLog | null;
  close(): Promise<void>;
}

/** The boards' own tables in a log several of them share. */
export interface SharedLog {
  /** One statement on the boards' shared tables, prepared under `name`, its rows as arrays. */
  shared<R extends unknown[]>(name: string, text: string, values: unknown[]): Promise<R[]>;
  /** The secret every board of the log signs run tokens with: made once, kept in the log. */
  boardSecret(): Promise<string>;
  readonly writer: string;
}

export type ExpectedVersion = number | 'any';

export interface AppendRequest {
  readonly expected: Readonly<Record<string, ExpectedVersion>>;
  readonly events: readonly NewEvent[];
  /** This append's place in a chain of appends that each stand on the ones before it. */
  readonly chain?: ChainLink;
  /**
   * A decision taken on state shared by many streams (the board's lanes, its submission order): refused,
   * as stale, if another writer committed an event of an owner-less stream of one of `kinds` after seq
   * `after` (the state holds everything of those kinds through `after`, and this writer's own events).
   * Checked by a store on which several processes decide for one scope (PostgreSQL, docs/rules.md#postgresql-board); a SQLite
   * log has one board (its lock file), and ignores it.
   */
  readonly guard?: AppendGuard;
  /**
   * A chore that must be done once (docs/rules.md#postgresql-board: reaping, hooks, notices): refused, as stale, unless the
   * lease row `name` is held by `holder` at `epoch`, unexpired, when the append's transaction checks it
   * (under the write lock). So a board that lost its lease while paused commits none of its chores. A
   * SQLite log has one board, which always holds it, and ignores it.
   */
  readonly lease?: AppendLease;
}

export interface AppendLease {
  readonly name: string;
  readonly holder: string;
  readonly epoch: number;
}

export interface AppendGuard {
  readonly kinds: readonly string[];
  readonly after: number;
}

export interface ChainLink {
  readonly chain: AppendChain;
  readonly link: number;
}

/**
 * The appends of one writer that each stand on the ones before (an actor that decides its next input
 * before its last decisions are committed). When one of them is refused or fails, the store breaks the
 * chain there, at once, and refuses every later one unwritten: none can commit past a gap. The ones
 * before the break are untouched.
 */
export class AppendChain {
  private links = 0;
  private brokenAt = Number.POSITIVE_INFINITY;

  /** Whether an append of the chain was refused or failed. */
  get broken(): boolean {
    return this.brokenAt !== Number.POSITIVE_INFINITY;
  }

  /** The place of the chain's next append. */
  next(): ChainLink {
    return { chain: this, link: this.links++ };
  }

  /** The append at `link` did not commit (or must count as not having): no later one may. */
  breakAt(link: number): void {
    this.brokenAt = Math.min(this.brokenAt, link);
  }

  /** Whether the append at `link` stands on nothing that failed. */
  holds(link: number): boolean {
    return link <= this.brokenAt;
  }
}

export type AppendResult =
  | { readonly ok: true; readonly events: readonly StoredEvent[] }
  | { readonly ok: false; readonly conflict: StaleVersionError };

/** Optimistic concurrency: someone appended to `stream` since the caller read it. Nothing was written. */
export class StaleVersionError extends Error {
  override readonly name = 'StaleVersionError';
  constructor(
    readonly stream: string,
    readonly expected: number,
    readonly actual: number,
    message = `stream ${stream} is at version ${actual}, not the expected ${expected}: nothing was written`,
    /** Refused only because an earlier append of its chain did not commit: no other writer is involved. */
    readonly brokenChain = false,
    /** Refused because its lease (AppendLease) is not held: reading the log again changes nothing. */
    readonly leaseLost = false,
  ) {
    super(message);
  }

  /** The refusal of an append whose chain broke before it: an earlier append it stood on did not commit. */
  static afterBrokenChain(request: AppendRequest): StaleVersionError {
    const [stream = '', expected] = Object.entries(request.expected)[0] ?? [];
    const version = typeof expected === 'number' ? expected : -1;
    return new StaleVersionError(
      stream,
      version,
      version,
      `an earlier append this one stood on was refused or failed: nothing was written to ${stream}`,
      true,
    );
  }
}

export interface Checkpoint {
  readonly name: string;
  readonly seq: number;
  /** JSON text of the projection's state as of `seq`. */
  readonly state: string;
}

/**
 * Besides the projections' checkpoints (named after them), each outbox keeps its mark here under its
 * stream's name (`outbox:<consumer>`: its cursor and its stream's fold, JSON): any name, one row each,
 * a save replacing the row only with a seq at or past the stored one.
 */
export interface CheckpointStore {
  load(name: string): Promise<Checkpoint | null>;
  save(checkpoint: Checkpoint): Promise<void>;
  list(): Promise<Checkpoint[]>;
}

/** Where a snapshot is kept: the projection's checkpoint (its newest state) or the snapshot history. */
export type SnapshotSource = 'checkpoint' | 'history';

export interface SnapshotInfo {
  readonly name: string;
  readonly seq: number;
  readonly source: SnapshotSource;
  /** Length of the state's JSON text. */
  readonly bytes: number;
}

/**
 * States of a projection as of several seqs, so that a fold as of any seq starts from the nearest one
 * at or before it, not from seq 0. A name's checkpoint counts as its newest snapshot; the history keeps
 * older ones: a checkpoint saved `every` events or more past the newest snapshot of its name is kept
 * in the history too, and each name keeps its newest `kept` history snapshots.
 */
export interface SnapshotStore {
  readonly every: number;
  readonly kept: number;
  /** Stores a snapshot in the history (replacing one of the same name and seq), then drops the oldest past `kept`. */
  save(snapshot: Checkpoint): Promise<void>;
  /** The snapshot of `name` with the greatest seq at or before `seq`, checkpoint or history. */
  nearest(name: string, seq: number): Promise<Checkpoint | null>;
  /** The newest history snapshot of `name` (its checkpoint aside), or null. */
  newestSeq(name: string): Promise<number | null>;
  /** Every snapshot and checkpoint, without their states, by name then seq. */
  list(): Promise<SnapshotInfo[]>;
  load(info: Pick<SnapshotInfo, 'name' | 'seq' | 'source'>): Promise<Checkpoint | null>;
}

/** Appends or throws: for callers (tools, tests) for whom a conflict is a bug, not a race to retry. */
export async function appendOrThrow(store: EventStore, request: AppendRequest): Promise<readonly StoredEvent[]> {
  const result = await store.append(request);
  if (!result.ok) throw result.conflict;
  return result.events;
}
