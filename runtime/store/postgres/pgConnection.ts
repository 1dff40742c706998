import pg from 'pg';

const INT8 = 20;
/** bigint columns (`seq`, `at`, `cause`) as numbers: a log's seqs and times stay far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 ? (text: string) => Number(text) : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};

export interface ConnectionOptions {
  /** Every transaction read-only (`replay`, `rebuild`, `audit`): PostgreSQL itself refuses each write. */
  readonly readOnly?: boolean;
  /** Connections in the pool (6 by default): the reads' pool; the appends' has one (see APPEND_CONNECTIONS). */
  readonly max?: number;
  /** What the pool is for, after `runledger` in `application_name` (`pg_stat_activity` tells reads from appends). */
  readonly purpose?: string;
  /** How long a transaction may wait on this process between its statements before the server ends it (see IDLE_IN_TRANSACTION_MS). */
  readonly idleInTransactionMs?: number;
}

/**
 * An append transaction holds the log's write lock, and waits on its process only for the few
 * microseconds between its statements. A process frozen (stopped, paused) or cut off mid-transaction
 * would hold the lock, and stop every board's appends, until TCP noticed (hours): the server ends
 * such a session after this long instead, rolling it back. Well within a lease (10 s), far above any
 * pause of a live process; the frozen one's commit then fails as a lost connection and is retried.
 */
export const IDLE_IN_TRANSACTION_MS = 5_000;

/**
 * The appends' own pool: the group commit runs one transaction at a time, so one connection, which no
 * read can take. Sharing the reads' pool, a burst of reads (status, the web view, a replay's pages)
 * held every connection and each commit queued behind them, and with it every decision of the board.
 */
export const APPEND_CONNECTIONS = 1;

/** A pool the store reads or appends through; `application_name` says who holds a connection and why (`pg_stat_activity`). */
export function connectionConfig(url: string, options: ConnectionOptions = {}): pg.PoolConfig {
  const readOnly = options.readOnly ? withOption(url, '-c default_transaction_read_only=on') : null;
  return {
    // pg lets the URL's own parameters override the config's: the URL's `options` go into ours instead.
    connectionString: readOnly ? readOnly.url : url,
    types,
    max: options.max ?? 6,
    application_name: options.purpose ? `runledger ${options.purpose}` : 'runledger',
    idle_in_transaction_session_timeout: options.idleInTransactionMs ?? IDLE_IN_TRANSACTION_MS,
    ...(readOnly ? { options: readOnly.options } : {}),
    // A server that does not answer is an error to report, not a hang.
    connectionTimeoutMillis: 10_000,
  };
}

/**
 * A pool of `connectionConfig(url, options)` whose connections' failures are heard, never thrown at
 * the process: a connection the server ends (an administrator, a restart, its idle-in-transaction
 * limit) reports it as an 'error' event, of the pool while it is idle there, of the connection itself
 * while code holds it, and kysely, which holds one through the migrations, listens to none. The
 * statement in flight fails all the same, and the pool replaces the connection.
 */
export function openPool(url: string, options: ConnectionOptions = {}): pg.Pool {
  const pool = new pg.Pool(connectionConfig(url, options));
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** `options` of the URL (e.g. `-c search_path=…`) kept, with `option` added, and the URL without them. */
function withOption(url: string, option: string): { url: string; options: string } {
  try {
    const parsed = new URL(url);
    const given = parsed.searchParams.get('options');
    parsed.searchParams.delete('options');
    return { url: parsed.toString(), options: given ? `${given} ${option}` : option };
  } catch {
    // pg reports the bad URL when it connects.
    return { url, options: option };
  }
}
