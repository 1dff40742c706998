import type { SharedLog } from '../../../runtime/store/eventStore.ts';
import { LeasedPeers, type LeasedPeersOptions, type PeerTables } from './leasedPeers.ts';

/**
 * Taken when free (expired) or renewed by its holder; the epoch grows at each change of holder. Times
 * are the database's (`clock_timestamp()`): boards on several machines compare one clock.
 */
const TAKE = `INSERT INTO board_leases AS l (name, holder, epoch, expires_at)
  VALUES ($1, $2, 1, clock_timestamp() + $3 * interval '1 millisecond')
  ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
    epoch = l.epoch + CASE WHEN l.holder = excluded.holder THEN 0 ELSE 1 END
  WHERE l.holder = excluded.holder OR l.expires_at < clock_timestamp()
  RETURNING epoch`;
const BEAT = `INSERT INTO board_processes (identity, computers, beat_at) VALUES ($1, $2::text[], clock_timestamp())
  ON CONFLICT (identity) DO UPDATE SET computers = excluded.computers, beat_at = excluded.beat_at`;
const GONE = 'DELETE FROM board_processes WHERE identity = $1';
const FORGET_BOARDS = `DELETE FROM board_processes WHERE beat_at < clock_timestamp() - $1 * interval '1 millisecond'`;
const ORPHANS = `SELECT c FROM unnest($1::text[]) AS u(c) WHERE NOT EXISTS (
  SELECT 1 FROM board_processes WHERE u.c = ANY(computers) AND beat_at > clock_timestamp() - $2 * interval '1 millisecond')`;
const HELD_ELSEWHERE = `SELECT 1 FROM board_processes WHERE identity <> $2 AND $1 = ANY(computers)
  AND beat_at > clock_timestamp() - $3 * interval '1 millisecond' LIMIT 1`;
const HEARD = `INSERT INTO run_heartbeats (run_id, at) SELECT * FROM unnest($1::text[], $2::bigint[])
  ON CONFLICT (run_id) DO UPDATE SET at = greatest(run_heartbeats.at, excluded.at)`;
const LAST_HEARD = 'SELECT run_id, at FROM run_heartbeats WHERE run_id = ANY($1::text[])';
const FORGET_RUNS = 'DELETE FROM run_heartbeats WHERE at < $1 AND NOT (run_id = ANY($2::text[]))';
/** The database's clock, in ms: the one clock the boards of several machines share. */
const DB_NOW = 'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8';

export type PostgresPeersOptions = LeasedPeersOptions;

/** PeerTables as migration 0007's tables on the log's PostgreSQL database. */
function postgresTables(store: SharedLog): PeerTables {
  return {
    take: async (name, holder, ttlMs) => {
      const taken = await store.shared<[string]>('runledger_take_lease', TAKE, [name, holder, ttlMs]);
      return taken.length > 0 ? Number(taken[0]![0]) : null;
    },
    beat: async (identity, computers) => void (await store.shared('runledger_board_beat', BEAT, [identity, computers])),
    gone: async (identity) => void (await store.shared('runledger_board_gone', GONE, [identity])),
    forgetBoards: async (ms) => void (await store.shared('runledger_forget_boards', FORGET_BOARDS, [ms])),
    orphans: async (connected, ttlMs) => (await store.shared<[string]>('runledger_board_orphans', ORPHANS, [connected, ttlMs])).map(([c]) => c),
    heldElsewhere: async (computerId, identity, ttlMs) =>
      (await store.shared('runledger_held_elsewhere', HELD_ELSEWHERE, [computerId, identity, ttlMs])).length > 0,
    heard: async (beats) => void (await store.shared('runledger_heard', HEARD, [beats.map(([runId]) => runId), beats.map(([, at]) => at)])),
    lastHeard: async (open) =>
      new Map((await store.shared<[string, string]>('runledger_last_heard', LAST_HEARD, [open])).map(([runId, at]) => [runId, Number(at)])),
    forgetRuns: async (before, open) => void (await store.shared('runledger_forget_runs', FORGET_RUNS, [before, open])),
    now: async () => Number((await store.shared<[number]>('runledger_db_now', DB_NOW, []))[0]![0]),
  };
}

/** The boards of one PostgreSQL log (docs/rules.md#postgresql-board): LeasedPeers on migration 0007's tables, as its store's writer (`host#incarnation:pid`). */
export class PostgresPeers extends LeasedPeers {
  constructor(store: SharedLog, options: PostgresPeersOptions) {
    super(postgresTables(store), store.writer, options);
  }
}
