import type Database from 'better-sqlite3';
import type { StoredEvent } from '../../envelope.ts';
import { type AppendRequest, type AppendResult, StaleVersionError } from '../eventStore.ts';

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

/** The body of `commitAppends`' transaction. */
function appendAll(
  statements: Pick<PreparedAppend, 'insert' | 'streamVersion' | 'headSeq'>,
  writer: string,
  requests: readonly AppendRequest[],
): AppendResult[] {
  let head = statements.headSeq.get() ?? 0;
  const versions = new Map<string, number>();
  const versionOf = (stream: string): number => {
    let version = versions.get(stream);
    if (version === undefined) {
      version = statements.streamVersion.get(stream) ?? 0;
      versions.set(stream, version);
    }
    return version;
  };
  return requests.map((request): AppendResult => {
    const chain = request.chain;
    if (chain && !chain.chain.holds(chain.link)) return { ok: false, conflict: StaleVersionError.afterBrokenChain(request) };
    for (const [stream, expected] of Object.entries(request.expected)) {
      const actual = versionOf(stream);
      if (expected !== 'any' && expected !== actual) {
        chain?.chain.breakAt(chain.link);
        return { ok: false, conflict: new StaleVersionError(stream, expected, actual) };
      }
    }
    const stored: StoredEvent[] = [];
    for (const event of request.events) {
      const seq = ++head;
      const version = versionOf(event.stream) + 1;
      versions.set(event.stream, version);
      const cause = resolveCause(event.cause, stored);
      statements.insert.run(seq, event.stream, version, event.type, JSON.stringify(event.data), event.at, cause, writer);
      stored.push({ seq, stream: event.stream, version, type: event.type, data: event.data, at: event.at, cause, actor: writer });
    }
    return { ok: true, events: stored };
  });
}

function resolveCause(cause: AppendRequest['events'][number]['cause'], earlier: readonly StoredEvent[]): number | null {
  if (cause === undefined || cause === null) return null;
  if (typeof cause === 'number') return cause;
  const target = earlier[cause.inBatch];
  if (!target) throw new Error(`cause refers to event ${cause.inBatch} of its append, which comes later or does not exist`);
  return target.seq;
}
