import type { Observable } from 'rxjs';
import type { DomainEvent } from '../catalog.ts';
import type { NewEvent, StoredEvent } from '../envelope.ts';

/**
 * The log, as every actor, projection and tool sees it. Nothing outside `events/store/sqlite/` knows
 * it is SQLite: a PostgreSQL store (kysely's Postgres dialect) can serve this interface unchanged.
 */
export interface EventStore {
  /**
   * Appends `events` atomically if every stream in `expected` is still at its expected version
   * (0: the stream must not exist yet; 'any': no check). Every stream written must be named in
   * `expected`. Appends made in one turn of the event loop commit in one transaction (group commit)
   * yet each is checked and refused on its own.
   */
  append(request: AppendRequest): Promise<AppendResult>;
  /** Events with `seq > after`, in order, at most `limit` of them. */
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
   * (in this process at once, in another within `pollMs`), none lost or repeated at the seam.
   */
  subscribe(after: number): Observable<DomainEvent>;
  readonly checkpoints: CheckpointStore;
  /** `host:pid` written in the `actor` column. */
  readonly writer: string;
  close(): Promise<void>;
}

export type ExpectedVersion = number | 'any';

export interface AppendRequest {
  readonly expected: Readonly<Record<string, ExpectedVersion>>;
  readonly events: readonly NewEvent[];
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
  ) {
    super(`stream ${stream} is at version ${actual}, not the expected ${expected}: nothing was written`);
  }
}

export interface Checkpoint {
  readonly name: string;
  readonly seq: number;
  /** JSON text of the projection's state as of `seq`. */
  readonly state: string;
}

export interface CheckpointStore {
  load(name: string): Promise<Checkpoint | null>;
  save(checkpoint: Checkpoint): Promise<void>;
  list(): Promise<Checkpoint[]>;
}

/** Appends or throws: for callers (tools, tests) for whom a conflict is a bug, not a race to retry. */
export async function appendOrThrow(store: EventStore, request: AppendRequest): Promise<readonly StoredEvent[]> {
  const result = await store.append(request);
  if (!result.ok) throw result.conflict;
  return result.events;
}
