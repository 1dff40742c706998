import type Database from 'better-sqlite3';
import type { AppendRequest, AppendResult } from '../eventStore.ts';
import { planAppends } from '../planAppends.ts';

export interface PreparedAppend {
  readonly insert: Database.Statement<[number, string, number, string, string, number, number | null, string]>;
  readonly streamVersion: Database.Statement<[string], number | null>;
  readonly headSeq: Database.Statement<[], number | null>;
  /**
   * `appendAll` wrapped in a transaction once per connection: better-sqlite3's `db.transaction()` builds
   * four wrappers and defines their properties on every call, which cost a third of a single append.
   */
  readonly appendAll: Database.Transaction<(writer: string, requests: readonly AppendRequest[]) => AppendResult[]>;
}

/**
 * Faults a test injects into the commit path (never set in production): `failWrites` is asked inside
 * each append transaction, after its rows are written, and an error it returns is thrown there, so
 * the failure goes through the same rollback as a real full disk.
 */
export interface StoreFaults {
  failWrites(): Error | null;
}

export function prepareAppendStatements(db: Database.Database, faults?: StoreFaults): PreparedAppend {
  const statements = {
    insert: db.prepare<[number, string, number, string, string, number, number | null, string]>(
      'INSERT INTO events (seq, stream, version, type, data, at, cause, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    streamVersion: db.prepare<[string], number | null>('SELECT max(version) FROM events WHERE stream = ?').pluck(),
    headSeq: db.prepare<[], number | null>('SELECT max(seq) FROM events').pluck(),
  };
  return {
    ...statements,
    appendAll: db.transaction((writer: string, requests: readonly AppendRequest[]) => {
      const results = appendAll(statements, writer, requests);
      const fault = faults?.failWrites() ?? null;
      if (fault) throw fault;
      return results;
    }),
  };
}

/**
 * One write transaction for a batch of appends. `BEGIN IMMEDIATE` takes the file's write lock before
 * reading any version, so two processes are serialised and the version check is exact. Each request is
 * checked whole before any of its rows is written: a stale one writes nothing and the others go on.
 */
export function commitAppends(statements: PreparedAppend, writer: string, requests: readonly AppendRequest[]): AppendResult[] {
  return statements.appendAll.immediate(writer, requests);
}

/** The body of `commitAppends`' transaction: the batch planned on the versions read under the write lock, then its rows written. */
function appendAll(
  statements: Pick<PreparedAppend, 'insert' | 'streamVersion' | 'headSeq'>,
  writer: string,
  requests: readonly AppendRequest[],
): AppendResult[] {
  const { results, rows } = planAppends(statements.headSeq.get() ?? 0, (stream) => statements.streamVersion.get(stream) ?? 0, writer, requests);
  for (const e of rows) statements.insert.run(e.seq, e.stream, e.version, e.type, JSON.stringify(e.data), e.at, e.cause, writer);
  return results;
}
