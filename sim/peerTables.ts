import type Database from 'better-sqlite3';
import type { PeerTables } from '../apps/board/peers/leasedPeers.ts';
import type { LeaseRow } from '../runtime/store/planAppends.ts';
import type { LeaseReader } from '../runtime/store/sqlite/appendBatch.ts';

/**
 * PostgreSQL's migration 0007 (board_leases, board_processes, run_heartbeats) in SQLite's words, beside
 * the shared log's events: its statements are postgresPeers.ts's, on the database's clock (virtual time).
 */
const TABLES = `CREATE TABLE IF NOT EXISTS board_leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, epoch INTEGER NOT NULL, expires_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS board_processes (identity TEXT PRIMARY KEY, computers TEXT NOT NULL, beat_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS run_heartbeats (run_id TEXT PRIMARY KEY, at INTEGER NOT NULL)`;
const TAKE = `INSERT INTO board_leases AS l (name, holder, epoch, expires_at) VALUES (@name, @holder, 1, @now + @ttl)
  ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
    epoch = l.epoch + CASE WHEN l.holder = excluded.holder THEN 0 ELSE 1 END
  WHERE l.holder = excluded.holder OR l.expires_at < @now
  RETURNING epoch`;
const BEAT = `INSERT INTO board_processes (identity, computers, beat_at) VALUES (?, ?, ?)
  ON CONFLICT (identity) DO UPDATE SET computers = excluded.computers, beat_at = excluded.beat_at`;
const GONE = 'DELETE FROM board_processes WHERE identity = ?';
const FORGET_BOARDS = 'DELETE FROM board_processes WHERE beat_at < ?';
const ORPHANS = `SELECT u.value FROM json_each(?) AS u WHERE NOT EXISTS (
  SELECT 1 FROM board_processes AS p, json_each(p.computers) AS c WHERE c.value = u.value AND p.beat_at > ?)`;
const HELD_ELSEWHERE = `SELECT 1 FROM board_processes AS p, json_each(p.computers) AS c
  WHERE p.identity <> ? AND c.value = ? AND p.beat_at > ? LIMIT 1`;
const HEARD = `INSERT INTO run_heartbeats (run_id, at) VALUES (?, ?)
  ON CONFLICT (run_id) DO UPDATE SET at = max(run_heartbeats.at, excluded.at)`;
const LAST_HEARD = 'SELECT run_id, at FROM run_heartbeats WHERE run_id IN (SELECT value FROM json_each(?))';
const FORGET_RUNS = 'DELETE FROM run_heartbeats WHERE at < ? AND run_id NOT IN (SELECT value FROM json_each(?))';
const LEASES = `SELECT name, holder, epoch, expires_at > ? FROM board_leases WHERE name IN (SELECT value FROM json_each(?))`;

/** The peer tables of one shared database, and the lease rows its appends' transactions read. */
export class SimPeerTables {
  private readonly statements;

  constructor(
    db: Database.Database,
    /** The database's clock: the world's virtual time, one for every board. */
    private readonly now: () => number,
  ) {
    db.exec(TABLES);
    this.statements = {
      take: db.prepare(TAKE).pluck(),
      beat: db.prepare<[string, string, number]>(BEAT),
      gone: db.prepare<[string]>(GONE),
      forgetBoards: db.prepare<[number]>(FORGET_BOARDS),
      orphans: db.prepare<[string, number], string>(ORPHANS).pluck(),
      heldElsewhere: db.prepare<[string, string, number]>(HELD_ELSEWHERE).pluck(),
      heard: db.prepare<[string, number]>(HEARD),
      lastHeard: db.prepare<[string], [string, number]>(LAST_HEARD).raw(true),
      forgetRuns: db.prepare<[number, string]>(FORGET_RUNS),
      leases: db.prepare<[number, string], [string, string, number, number]>(LEASES).raw(true),
    };
  }

  /** What the store's write transaction reads (AppendLease): `live` on the database's clock, as pgAppend's `expires_at > clock_timestamp()`. */
  readonly leases: LeaseReader = (names) =>
    new Map(
      this.statements.leases
        .all(this.now(), JSON.stringify(names))
        .map(([name, holder, epoch, live]): [string, LeaseRow] => [name, { holder, epoch, live: live === 1 }]),
    );

  /**
   * One board life's connection to the tables: `refuse` says why a statement fails now (its process is
   * dead, the database is full), as the life's store connection refuses commits.
   */
  connection(refuse: (writes: boolean) => Error | null): PeerTables {
    const s = this.statements;
    const run = async <T>(writes: boolean, statement: () => T): Promise<T> => {
      const refused = refuse(writes);
      if (refused) throw refused;
      return statement();
    };
    return {
      take: (name, holder, ttl) => run(true, () => (s.take.get({ name, holder, ttl, now: this.now() }) as number | undefined) ?? null),
      beat: (identity, computers) => run(true, () => void s.beat.run(identity, JSON.stringify(computers), this.now())),
      gone: (identity) => run(true, () => void s.gone.run(identity)),
      forgetBoards: (ms) => run(true, () => void s.forgetBoards.run(this.now() - ms)),
      orphans: (connected, ttl) => run(false, () => s.orphans.all(JSON.stringify(connected), this.now() - ttl)),
      heldElsewhere: (computerId, identity, ttl) => run(false, () => s.heldElsewhere.get(identity, computerId, this.now() - ttl) !== undefined),
      heard: (beats) =>
        run(true, () => {
          for (const [runId, at] of beats) s.heard.run(runId, at);
        }),
      lastHeard: (open) => run(false, () => new Map(s.lastHeard.all(JSON.stringify(open)))),
      forgetRuns: (before, open) => run(true, () => void s.forgetRuns.run(before, JSON.stringify(open))),
      now: () => run(false, () => this.now()),
    };
  }
}
