import type pg from 'pg';
import type { AppendRequest, AppendResult } from '../eventStore.ts';
import { guardsOf, type LeaseRow, leasesOf, planAppends, streamsOf } from '../planAppends.ts';

/**
 * Faults a test injects into the commit path (never set in production). `failWrites` is asked inside
 * each append transaction after its rows are written, and an error it returns is thrown there, so the
 * failure goes through the same rollback as a real one. `beforeCommit` is awaited there too: a test
 * holds a transaction open, its rows written, while others try to commit theirs.
 */
export interface PgStoreFaults {
  failWrites?(): Error | null;
  beforeCommit?(): Promise<void>;
}

/** Where a store's transactions meet: its write lock and its wake-up channel, one of each per log (schema). */
export interface LogIdentity {
  /** The schema its tables are in (the connection's `current_schema()`). */
  readonly schema: string;
  /** The advisory lock every append transaction of this log takes first. */
  readonly lockKey: string;
  /** The LISTEN/NOTIFY channel a commit is announced on. */
  readonly channel: string;
}

/**
 * How long one statement (of an append transaction, or a read) may go unanswered: above the wait for the
 * write lock behind a frozen holder (IDLE_IN_TRANSACTION_MS, 5 s), far above a commit's or a page's usual
 * milliseconds. Past it the statement fails as a lost connection (an outage, retried), never hangs.
 */
export const STATEMENT_TIMEOUT_MS = 15_000;

/** The log's head and each named stream's version, as the transaction sees them under the lock. */
const VERSIONS = `SELECT (SELECT coalesce(max(seq), 0) FROM events),
  coalesce((SELECT array_agg((SELECT coalesce(max(version), 0) FROM events WHERE stream = u.s) ORDER BY u.o)
            FROM unnest($1::text[]) WITH ORDINALITY AS u(s, o)), '{}')`;
/**
 * The newest event of another writer of each guarded kind (owner-less streams) since the oldest guarded
 * state: a range of the primary key, short, as a guarded writer folds again whenever it sees one.
 */
const GUARD = `SELECT max(seq), (array_agg(stream ORDER BY seq DESC))[1], split_part(stream, ':', 1) FROM events
  WHERE seq > $1 AND actor <> $2 AND strpos(stream, '/') = 0 AND split_part(stream, ':', 1) = ANY($3::text[])
  GROUP BY split_part(stream, ':', 1)`;
/**
 * The lease rows the batch's chores name (migration 0007), and whether each is unexpired now: read under
 * the write lock, so a lease taken over after this read can only commit its chores after this commit.
 */
const LEASES = `SELECT name, holder, epoch, expires_at > clock_timestamp() FROM board_leases WHERE name = ANY($1::text[])`;
/** Every row of the batch in one statement (arrays, one per column). */
const INSERT = `INSERT INTO events (seq, stream, version, type, data, at, cause, actor)
  SELECT s, st, v, t, d, a, c, $8 FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[], $5::text[], $6::bigint[], $7::bigint[]) AS r(s, st, v, t, d, a, c)`;
/** `text` inside single quotes: its quotes doubled (a notice is a UUID, but no text goes in unquoted). */
function quoteLiteral(text: string): string {
  return text.replaceAll("'", "''");
}

/**
 * One write transaction for a batch of appends (group commit). It first takes the log's advisory lock,
 * so append transactions are serialised across every process on the database: the head and versions
 * it reads cannot move before it commits, the version check is exact, and seqs are handed out without
 * gaps in the order transactions commit. That order is what makes `seq > after` safe to follow: a
 * transaction can only take the lock, and so a seq, after the one before it has committed (PostgreSQL
 * marks a transaction committed before it releases its locks), so no reader can see seq N+1 while N is
 * still in flight — the commit that a `bigserial` read by position would miss cannot happen here.
 * Each request is checked whole before any of its rows is written; a stale one writes nothing and the
 * others go on. The commit is announced on the log's channel (delivered at COMMIT, never before).
 */
export async function commitBatch(
  client: pg.ClientBase,
  log: LogIdentity,
  notice: string,
  writer: string,
  requests: readonly AppendRequest[],
  timeoutMs: number,
  faults?: PgStoreFaults,
): Promise<AppendResult[]> {
  // Four round trips, as a raw transaction would take: the lock goes with BEGIN, the NOTIFY with COMMIT
  // (both texts are the store's own: a number and an identifier, nothing a caller gave). READ COMMITTED
  // whatever the server's default: each statement's snapshot is taken after the lock is granted, so it
  // sees the commit it waited for (under REPEATABLE READ or SERIALIZABLE the snapshot would predate it).
  // Each statement has a time limit (`timeoutMs`): a server gone silent (a network dropping packets, no
  // reset) fails the append as a lost connection, to be retried, instead of holding this store's
  // commits for ever; the connection is then dropped, and the server rolls the transaction back.
  const timeout = { query_timeout: timeoutMs };
  await client.query({ text: `BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(${BigInt(log.lockKey)})`, ...timeout });
  try {
    const streams = streamsOf(requests);
    const read = await client.query<[number, number[]]>({
      name: 'runledger_versions',
      text: VERSIONS,
      values: [streams],
      rowMode: 'array',
      ...timeout,
    });
    const [head, versions] = read.rows[0]!;
    const versionOf = new Map(streams.map((stream, i) => [stream, versions[i] ?? 0]));
    const guards = guardsOf(requests);
    const foreign = guards
      ? (
          await client.query<[number, string, string]>({
            name: 'runledger_guard',
            text: GUARD,
            values: [guards.after, writer, guards.kinds],
            rowMode: 'array',
            ...timeout,
          })
        ).rows.map(([seq, stream, kind]) => ({ seq, stream, kind }))
      : [];
    const leaseNames = leasesOf(requests);
    const leases = leaseNames.length
      ? new Map(
          (
            await client.query<[string, string, string, boolean]>({
              name: 'runledger_leases',
              text: LEASES,
              values: [leaseNames],
              rowMode: 'array',
              ...timeout,
            })
          ).rows.map(([name, holder, epoch, live]): [string, LeaseRow] => [name, { holder, epoch: Number(epoch), live }]),
        )
      : null;
    const { results, rows } = planAppends(head, (stream) => versionOf.get(stream) ?? 0, writer, requests, foreign, leases);
    if (rows.length > 0) {
      await client.query({
        name: 'runledger_insert',
        text: INSERT,
        values: [
          rows.map((e) => e.seq),
          rows.map((e) => e.stream),
          rows.map((e) => e.version),
          rows.map((e) => e.type),
          rows.map((e) => JSON.stringify(e.data)),
          rows.map((e) => e.at),
          rows.map((e) => e.cause),
          writer,
        ],
        ...timeout,
      });
    }
    const fault = faults?.failWrites?.() ?? null;
    if (fault) throw fault;
    await faults?.beforeCommit?.();
    await client.query({ text: rows.length > 0 ? `NOTIFY "${log.channel}", '${quoteLiteral(notice)}'; COMMIT` : 'COMMIT', ...timeout });
    return results;
  } catch (error) {
    await client.query({ text: 'ROLLBACK', ...timeout }).catch(() => undefined);
    throw error;
  }
}
