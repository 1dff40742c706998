import type { AppendLease } from '../../../../events/store/eventStore.ts';
import type { PostgresEventStore } from '../../../../events/store/postgres/postgresEventStore.ts';
import { messageOf } from '../../../../events/thrown.ts';
import type { Clock } from '../../../runtime/clock.ts';
import type { FailureLog } from '../../../runtime/untilRecorded.ts';
import type { BoardPeers, PeerRounds } from './boardPeers.ts';

/** How long a board's chores and computers wait for it before another board takes them (SPEC 8). */
export const BOARD_LEASE_MS = 10_000;
/** The one lease of a log's boards: its chores (reaping, offers, hooks, notices, orphaned computers). */
const CHORES = 'chores';

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
/** Rows of boards silent for many leases: nobody reads them again. */
const FORGET_BOARDS = `DELETE FROM board_processes WHERE beat_at < clock_timestamp() - $1 * interval '1 millisecond'`;
const ORPHANS = `SELECT c FROM unnest($1::text[]) AS u(c) WHERE NOT EXISTS (
  SELECT 1 FROM board_processes WHERE u.c = ANY(computers) AND beat_at > clock_timestamp() - $2 * interval '1 millisecond')`;
const HEARD = `INSERT INTO run_heartbeats (run_id, at) SELECT * FROM unnest($1::text[], $2::bigint[])
  ON CONFLICT (run_id) DO UPDATE SET at = greatest(run_heartbeats.at, excluded.at)`;
const LAST_HEARD = 'SELECT run_id, at FROM run_heartbeats WHERE run_id = ANY($1::text[])';
/** The database's clock, in ms: the one clock the boards of several machines share. */
const DB_NOW = 'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8';
/** Rows of runs no longer open: left a lease behind, so a heartbeat upserted as its claim commits is kept. */
const FORGET_RUNS = 'DELETE FROM run_heartbeats WHERE at < $1 AND NOT (run_id = ANY($2::text[]))';

export interface PostgresPeersOptions {
  readonly clock: Clock;
  /** The board lease: how soon after a board's death another takes its chores and computers (BOARD_LEASE_MS by default). */
  readonly leaseMs?: number;
  readonly log: FailureLog;
}

/**
 * The boards of one PostgreSQL log (SPEC 8), met in three tables of migration 0007. Every quarter of
 * the board lease a board renews (or takes, once expired) the chores' lease and upserts its liveness
 * row; the holder then runs the boards' own round. Both rows count for three quarters of the lease, so
 * a board that stops answering (SIGKILL, a pause) last renewed at most that long before, and the next
 * renewal of another board after the expiry, within a quarter more, takes its chores and (in the same
 * round) its computers: within one board lease of its death. A chore it appends after that, however
 * late, carries its old epoch and is refused in the append's transaction.
 */
export class PostgresPeers implements BoardPeers {
  /** Its store's writer: `host#incarnation:pid`, unique to this process, the `actor` of every event it writes. */
  readonly identity: string;
  /** How long a renewal holds the lease, and a liveness row counts: three quarters of the board lease. */
  private readonly ttlMs: number;
  private readonly everyMs: number;
  private epoch: number | null = null;
  /** Until when (this process's monotonic clock) the lease is held: measured from before the renewal was sent. */
  private heldUntil = 0;
  private cancel: (() => void) | null = null;
  private rounds: PeerRounds | null = null;
  private readonly pending = new Map<string, number>();
  private flushing: Promise<void> | null = null;
  /**
   * This board's clock minus the database's (ms), measured at each renewal: heartbeats are kept in the
   * database's clock, so a reaper compares a heartbeat heard on a board whose clock is minutes apart
   * from its own with its own clock, not with the other's (it would reap a live run, or keep a dead one).
   */
  private offset: number | null = null;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: PostgresEventStore,
    private readonly options: PostgresPeersOptions,
  ) {
    const boardLease = options.leaseMs ?? BOARD_LEASE_MS;
    this.ttlMs = Math.floor((boardLease * 3) / 4);
    this.everyMs = Math.max(25, Math.floor(boardLease / 4));
    this.identity = store.writer;
  }

  async start(rounds: PeerRounds): Promise<void> {
    this.rounds = rounds;
    const loop = () => {
      this.cancel = this.options.clock.after(this.everyMs, () => {
        this.running = this.renew().finally(() => this.cancel !== null && loop());
      });
    };
    this.running = this.renew();
    await this.running;
    loop();
  }

  async stop(): Promise<void> {
    this.cancel?.();
    this.cancel = null;
    await this.running;
    await this.flushing;
    // Gone for good: its computers are orphaned at the holder's next round, not a lease later. The lease is
    // left to expire (another holder's epoch is only ever taken over an expired row).
    await this.store.shared('runledger_board_gone', GONE, [this.identity]).catch(() => undefined);
  }

  holdsChores(): boolean {
    return this.epoch !== null && performance.now() < this.heldUntil;
  }

  choreLease(): AppendLease {
    // Not held: epoch 0 is no holder's, so the chore is refused in its transaction.
    return { name: CHORES, holder: this.identity, epoch: this.holdsChores() ? this.epoch! : 0 };
  }

  async holding(computers: readonly string[]): Promise<void> {
    await this.store.shared('runledger_board_beat', BEAT, [this.identity, computers]);
  }

  async orphans(connected: readonly string[]): Promise<string[]> {
    if (connected.length === 0) return [];
    return (await this.store.shared<[string]>('runledger_board_orphans', ORPHANS, [connected, this.ttlMs])).map(([c]) => c);
  }

  heard(runId: string, at: number): void {
    this.pending.set(runId, Math.max(at, this.pending.get(runId) ?? at));
    this.flushing ??= this.flush();
  }

  async lastHeard(open: readonly string[]): Promise<ReadonlyMap<string, number>> {
    await this.flushing;
    const offset = await this.clockOffset();
    const rows = await this.store.shared<[string, string]>('runledger_last_heard', LAST_HEARD, [open]);
    await this.store.shared('runledger_forget_runs', FORGET_RUNS, [this.options.clock.now() - offset - this.ttlMs, open]);
    return new Map(rows.map(([runId, at]) => [runId, Number(at) + offset]));
  }

  /** Writes the heartbeats heard since the last write, one statement at a time (those heard meanwhile go in the next). */
  private async flush(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = [...this.pending];
      this.pending.clear();
      try {
        const offset = await this.clockOffset();
        await this.store.shared('runledger_heard', HEARD, [batch.map(([runId]) => runId), batch.map(([, at]) => at - offset)]);
      } catch (error) {
        // Kept for the next write, unless newer ones came; a reaper meanwhile sees the older beat.
        for (const [runId, at] of batch) if (!this.pending.has(runId)) this.pending.set(runId, at);
        this.options.log(`board peers: heartbeats could not be written (${messageOf(error)}); written with the next one`);
        break;
      }
    }
    this.flushing = null;
  }

  /** The last offset measured (see `offset`), or one measured now before the first renewal. */
  private async clockOffset(): Promise<number> {
    return this.offset ?? this.measureOffset();
  }

  /** The database's clock read between two readings of this board's: their midpoint, less a round trip's error. */
  private async measureOffset(): Promise<number> {
    const before = this.options.clock.now();
    const [row] = await this.store.shared<[number]>('runledger_db_now', DB_NOW, []);
    const after = this.options.clock.now();
    this.offset = Math.round((before + after) / 2 - Number(row![0]));
    return this.offset;
  }

  private async renew(): Promise<void> {
    const sent = performance.now();
    try {
      const taken = await this.store.shared<[string]>('runledger_take_lease', TAKE, [CHORES, this.identity, this.ttlMs]);
      if (taken.length > 0) {
        const epoch = Number(taken[0]![0]);
        if (epoch !== this.epoch) this.options.log(`board ${this.identity}: holds the chores' lease (epoch ${epoch})`);
        this.epoch = epoch;
        this.heldUntil = sent + this.ttlMs;
      } else {
        this.epoch = null;
      }
      await this.holding(this.rounds?.computers() ?? []);
      await this.measureOffset();
    } catch (error) {
      this.options.log(`board peers: the lease could not be renewed (${messageOf(error)}); trying again next round`);
      return;
    }
    if (!this.holdsChores()) return;
    await this.store.shared('runledger_forget_boards', FORGET_BOARDS, [this.ttlMs * 30]).catch(() => undefined);
    await this.rounds?.round().catch((error: unknown) => this.options.log(`board peers: the holder's round failed (${messageOf(error)})`));
  }
}
