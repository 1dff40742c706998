import type Database from 'better-sqlite3';
import type { StoredEvent } from '../../../events/envelope.ts';
import type { AppendRequest, AppendResult } from '../eventStore.ts';
import { type GuardRow, guardsOf, type LeaseRow, leasesOf, planAppends } from '../planAppends.ts';
import { onFirstUse } from './onFirstUse.ts';

export interface PreparedAppend {
  readonly insert: () => Database.Statement<[number, string, number, string, string, number, number | null, string]>;
  readonly streamVersion: () => Database.Statement<[string], number | null>;
  /**
   * A stream's version in the archives, for one with no row in the live log (docs/retention.md): its
   * rows left with a segment, and the next append to it goes on from their version, not from 0.
   */
  readonly archivedVersion: ((stream: string) => number) | null;
  readonly headSeq: () => Database.Statement<[], number | null>;
  /** The guard's query (see GUARD), when this store checks guards; null when it ignores them. */
  readonly guard: (() => Database.Statement<[number, string, string], [number, string, string]>) | null;
  /** The lease rows a batch's chores name, read inside its transaction (see LeaseReader); null when leases are not checked. */
  readonly leases: LeaseReader | null;
  /**
   * `appendAll` wrapped in a transaction once per connection, at its first append: better-sqlite3's `db.transaction()` builds
   * four wrappers and defines their properties on every call, which cost a third of a single append.
   */
  readonly appendAll: () => Database.Transaction<(writer: string, requests: readonly AppendRequest[]) => AppendResult[]>;
}

/**
 * Faults a test injects into the commit path (never set in production): `failWrites` is asked inside
 * each append transaction, after its rows are written, and an error it returns is thrown there, so
 * the failure goes through the same rollback as a real full disk.
 */
export interface StoreFaults {
  failWrites?(): Error | null;
  /** Told each write transaction's appends as it begins (a test counts the group commit's transactions). */
  committing?(requests: readonly AppendRequest[]): void;
}

/** A stream's kind, the text before its first `:` (PostgreSQL's `split_part(stream, ':', 1)`). */
const KIND = `CASE instr(stream, ':') WHEN 0 THEN stream ELSE substr(stream, 1, instr(stream, ':') - 1) END`;
/**
 * PostgreSQL's guard query (runtime/store/postgres/pgAppend.ts) in SQLite's words: the newest event of
 * another writer of each guarded kind (owner-less streams) since the oldest guarded state. A bare
 * column beside `max(seq)` is read from the row that has it, as PostgreSQL's `array_agg(... DESC)[1]`.
 */
const GUARD = `SELECT max(seq), stream, ${KIND} FROM events
  WHERE seq > ? AND actor <> ? AND instr(stream, '/') = 0 AND ${KIND} IN (SELECT value FROM json_each(?))
  GROUP BY ${KIND}`;

/**
 * The lease rows named (AppendLease), as the append's write transaction sees them: a log shared by
 * several boards keeps them beside its events (the simulator's, as PostgreSQL's board_leases).
 */
export type LeaseReader = (names: readonly string[]) => ReadonlyMap<string, LeaseRow>;

export function prepareAppendStatements(
  db: Database.Database,
  faults?: StoreFaults,
  checkGuards = false,
  leases: LeaseReader | null = null,
  archivedVersion: ((stream: string) => number) | null = null,
): PreparedAppend {
  const statements = {
    leases,
    archivedVersion,
    guard: checkGuards ? onFirstUse(() => db.prepare<[number, string, string], [number, string, string]>(GUARD).raw(true)) : null,
    insert: onFirstUse(() =>
      db.prepare<[number, string, number, string, string, number, number | null, string]>(
        'INSERT INTO events (seq, stream, version, type, data, at, cause, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
    ),
    streamVersion: onFirstUse(() => db.prepare<[string], number | null>('SELECT max(version) FROM events WHERE stream = ?').pluck()),
    headSeq: onFirstUse(() => db.prepare<[], number | null>('SELECT max(seq) FROM events').pluck()),
  };
  return {
    ...statements,
    appendAll: onFirstUse(() =>
      db.transaction((writer: string, requests: readonly AppendRequest[]) => {
        faults?.committing?.(requests);
        const results = appendAll(statements, writer, requests);
        const fault = faults?.failWrites?.() ?? null;
        if (fault) throw fault;
        return results;
      }),
    ),
  };
}

/**
 * One write transaction for a batch of appends. `BEGIN IMMEDIATE` takes the file's write lock before
 * reading any version, so two processes are serialised and the version check is exact. Each request is
 * checked whole before any of its rows is written: a stale one writes nothing and the others go on.
 */
export function commitAppends(statements: PreparedAppend, writer: string, requests: readonly AppendRequest[]): AppendResult[] {
  return statements.appendAll().immediate(writer, requests);
}

/** The body of `commitAppends`' transaction: the batch planned on the versions read under the write lock, then its rows written. */
function appendAll(
  statements: Pick<PreparedAppend, 'insert' | 'streamVersion' | 'archivedVersion' | 'headSeq' | 'guard' | 'leases'>,
  writer: string,
  requests: readonly AppendRequest[],
): AppendResult[] {
  const streamVersion = statements.streamVersion();
  const { results, rows } = planAppends(
    statements.headSeq().get() ?? 0,
    (stream) => streamVersion.get(stream) ?? statements.archivedVersion?.(stream) ?? 0,
    writer,
    requests,
    foreignRows(statements.guard, writer, requests),
    leaseRows(statements.leases, requests),
  );
  const insert = statements.insert();
  for (const e of rows) {
    const text = JSON.stringify(e.data);
    writtenData.set(e, text);
    insert.run(e.seq, e.stream, e.version, e.type, text, e.at, e.cause, writer);
  }
  return results;
}

/** The text each committed event's row holds in `data`, by the event: for its store's decoder (RowDecoder.remember). */
export const writtenData = new WeakMap<StoredEvent, string>();

/** Other writers' events that break a guard of the batch, read under the write lock (none when guards are ignored). */
function foreignRows(guard: PreparedAppend['guard'], writer: string, requests: readonly AppendRequest[]): GuardRow[] {
  const guards = guard ? guardsOf(requests) : null;
  if (!guard || !guards) return [];
  return guard()
    .all(guards.after, writer, JSON.stringify(guards.kinds))
    .map(([seq, stream, kind]) => ({ seq, stream, kind }));
}

/** The lease rows the batch's chores name, read under the write lock (null when leases are not checked, or none is named). */
function leaseRows(leases: LeaseReader | null, requests: readonly AppendRequest[]): ReadonlyMap<string, LeaseRow> | null {
  const names = leases ? leasesOf(requests) : [];
  return leases && names.length > 0 ? leases(names) : null;
}
