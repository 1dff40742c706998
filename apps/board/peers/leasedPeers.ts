import { messageOf } from '../../../events/thrown.ts';
import type { Clock } from '../../../runtime/actors/clock.ts';
import type { FailureLog } from '../../../runtime/actors/untilRecorded.ts';
import type { AppendLease } from '../../../runtime/store/eventStore.ts';
import type { BoardPeers, PeerRounds } from './boardPeers.ts';

/** How long a board's chores and computers wait for it before another board takes them (docs/rules.md#postgresql-board). */
export const BOARD_LEASE_MS = 10_000;
/** The one lease of a log's boards: its chores (reaping, offers, hooks, notices, orphaned computers). */
export const CHORES = 'chores';

/**
 * The three shared tables the boards of one log meet in (PostgreSQL's migration 0007; the simulator's
 * shared log keeps the same rows), each statement run alone. Times are the database's: boards on
 * several machines compare one clock.
 */
export interface PeerTables {
  /** Takes lease `name` when free (expired) or renews it for its holder, for `ttlMs`: its epoch, grown at each change of holder; null when another holds it. */
  take(name: string, holder: string, ttlMs: number): Promise<number | null>;
  /** Upserts `identity`'s liveness row: the computers whose streams it holds, as of now. */
  beat(identity: string, computers: readonly string[]): Promise<void>;
  /** Deletes `identity`'s liveness row (a board stopped for good). */
  gone(identity: string): Promise<void>;
  /** Deletes the liveness rows silent for longer than `ms`: nobody reads them again. */
  forgetBoards(ms: number): Promise<void>;
  /** Of `connected`, those no liveness row newer than `ttlMs` holds. */
  orphans(connected: readonly string[], ttlMs: number): Promise<string[]>;
  /** Whether a liveness row newer than `ttlMs`, other than `identity`'s, holds `computerId`. */
  heldElsewhere(computerId: string, identity: string, ttlMs: number): Promise<boolean>;
  /** Upserts each run's last heartbeat (the greatest kept). */
  heard(beats: readonly (readonly [string, number])[]): Promise<void>;
  /** The last heartbeat of each of `open` that has a row. */
  lastHeard(open: readonly string[]): Promise<ReadonlyMap<string, number>>;
  /** Deletes the rows of runs not in `open` whose last heartbeat is before `before`. */
  forgetRuns(before: number, open: readonly string[]): Promise<void>;
  /** The database's clock, in ms: the one clock the boards of several machines share. */
  now(): Promise<number>;
}

export interface LeasedPeersOptions {
  readonly clock: Clock;
  /** The board lease: how soon after a board's death another takes its chores and computers (BOARD_LEASE_MS by default). */
  readonly leaseMs?: number;
  readonly log: FailureLog;
  /** This process's monotonic clock, which the lease's hold is measured on (`performance.now()` by default). */
  readonly monotonic?: () => number;
}

/**
 * The boards of one shared log (docs/rules.md#postgresql-board), met in the tables of PeerTables. Every quarter of the board
 * lease a board renews (or takes, once expired) the chores' lease and upserts its liveness row; the
 * holder then runs the boards' own round. Both rows count for three quarters of the lease, so a board
 * that stops answering (SIGKILL, a pause) last renewed at most that long before, and the next renewal
 * of another board after the expiry, within a quarter more, takes its chores and (in the same round)
 * its computers: within one board lease of its death. A chore it appends after that, however late,
 * carries its old epoch and is refused in the append's transaction.
 */
export class LeasedPeers implements BoardPeers {
  /** How long a renewal holds the lease, and a liveness row counts: three quarters of the board lease. */
  private readonly ttlMs: number;
  private readonly everyMs: number;
  private readonly monotonic: () => number;
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
    private readonly tables: PeerTables,
    /** This board process's life, unique to it: the lease's holder and its liveness row. */
    readonly identity: string,
    private readonly options: LeasedPeersOptions,
  ) {
    const boardLease = options.leaseMs ?? BOARD_LEASE_MS;
    this.ttlMs = Math.floor((boardLease * 3) / 4);
    this.everyMs = Math.max(25, Math.floor(boardLease / 4));
    this.monotonic = options.monotonic ?? (() => performance.now());
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
    await this.tables.gone(this.identity).catch(() => undefined);
  }

  holdsChores(): boolean {
    return this.epoch !== null && this.monotonic() < this.heldUntil;
  }

  choreLease(): AppendLease {
    // Not held: epoch 0 is no holder's, so the chore is refused in its transaction.
    return { name: CHORES, holder: this.identity, epoch: this.holdsChores() ? this.epoch! : 0 };
  }

  async holding(computers: readonly string[]): Promise<void> {
    await this.tables.beat(this.identity, computers);
  }

  async orphans(connected: readonly string[]): Promise<string[]> {
    if (connected.length === 0) return [];
    return this.tables.orphans(connected, this.ttlMs);
  }

  async heldElsewhere(computerId: string): Promise<boolean> {
    return this.tables.heldElsewhere(computerId, this.identity, this.ttlMs);
  }

  heard(runId: string, at: number): void {
    this.pending.set(runId, Math.max(at, this.pending.get(runId) ?? at));
    this.flushing ??= this.flush();
  }

  async lastHeard(open: readonly string[]): Promise<ReadonlyMap<string, number>> {
    await this.flushing;
    const offset = await this.clockOffset();
    const last = await this.tables.lastHeard(open);
    // Rows of runs no longer open: left a lease behind, so a heartbeat upserted as its claim commits is kept.
    await this.tables.forgetRuns(this.options.clock.now() - offset - this.ttlMs, open);
    return new Map([...last].map(([runId, at]) => [runId, at + offset]));
  }

  /** Writes the heartbeats heard since the last write, one statement at a time (those heard meanwhile go in the next). */
  private async flush(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = [...this.pending];
      this.pending.clear();
      try {
        const offset = await this.clockOffset();
        await this.tables.heard(batch.map(([runId, at]) => [runId, at - offset]));
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
    const db = await this.tables.now();
    const after = this.options.clock.now();
    this.offset = Math.round((before + after) / 2 - db);
    return this.offset;
  }

  private async renew(): Promise<void> {
    const sent = this.monotonic();
    try {
      const epoch = await this.tables.take(CHORES, this.identity, this.ttlMs);
      if (epoch !== null) {
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
    // Its row now says which streams it holds, so no holder's round takes them for orphans: the log may say so too.
    this.rounds?.streams?.();
    if (!this.holdsChores()) return;
    await this.tables.forgetBoards(this.ttlMs * 30).catch(() => undefined);
    await this.rounds?.round().catch((error: unknown) => this.options.log(`board peers: the holder's round failed (${messageOf(error)})`));
  }
}
