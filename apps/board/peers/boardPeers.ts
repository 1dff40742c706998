import type { AppendLease } from '../../../runtime/store/eventStore.ts';

/**
 * What a board shares with the other boards of its log (docs/rules.md#postgresql-board), and the one answer a board on a
 * SQLite file gives alone (`SoleBoard`): who does the chores that must run once, which computers no
 * live board holds, and every run's last heartbeat whichever board heard it.
 */
export interface BoardPeers {
  /** This board process's life: unique (random), recorded as the lease's holder and its liveness row. */
  readonly identity: string;
  /**
   * Takes the lease if it can (resolving after the first try, and its round if it was held), then keeps
   * renewing or taking it and saying which computers this board holds; `round` runs after each renewal held.
   */
  start(options: PeerRounds): Promise<void>;
  stop(): Promise<void>;
  /** Whether this board holds the chores' lease now, as far as it knows (its appends are checked anyway). */
  holdsChores(): boolean;
  /** What a chore's append carries, checked in its transaction (null: no lease to check, one board). */
  choreLease(): AppendLease | null;
  /** Says at once which computers this board holds (before a connection is recorded, so no sweep takes it as orphaned). */
  holding(computers: readonly string[]): Promise<void>;
  /** Of the computers recorded connected, those no live board holds the stream of. */
  orphans(connected: readonly string[]): Promise<string[]>;
  /** Whether a live board other than this one says it holds `computerId`'s stream. */
  heldElsewhere(computerId: string): Promise<boolean>;
  /** A heartbeat (or a claim) of `runId`, heard by this board at `at`. */
  heard(runId: string, at: number): void;
  /** The last heartbeat of each of `open` heard by any board; runs no longer open are forgotten. */
  lastHeard(open: readonly string[]): Promise<ReadonlyMap<string, number>>;
}

export interface PeerRounds {
  /** The computers whose push streams this board holds now. */
  readonly computers: () => readonly string[];
  /** The lease holder's chores of the boards' own (recording orphaned computers disconnected). */
  readonly round: () => Promise<void>;
  /**
   * Every board's own round, after each renewal that wrote its liveness row, holder or not: the streams it
   * holds that the log has offline are recorded connected again. Not awaited: what it records may wait
   * for the log, and the renewals must go on meanwhile.
   */
  readonly streams?: () => void;
}

/**
 * The board of a SQLite log: the only one (its lock file), so it always holds the lease, every
 * computer recorded connected when it starts was a stopped board's, and heartbeats live in memory
 * (the log grows with decisions, not with time) — what it did before several boards existed.
 */
export class SoleBoard implements BoardPeers {
  readonly identity = 'sole';
  private readonly last = new Map<string, number>();
  private computers: () => readonly string[] = () => [];

  /** Its one round, at its start: computers recorded connected by the board that stopped are closed. */
  async start(rounds: PeerRounds): Promise<void> {
    this.computers = rounds.computers;
    await rounds.round();
  }

  async stop(): Promise<void> {
    // Nothing shared to give back.
  }

  holdsChores(): boolean {
    return true;
  }

  choreLease(): null {
    return null;
  }

  async holding(): Promise<void> {
    // Nobody else to tell: every computer connected is this board's.
  }

  async orphans(connected: readonly string[]): Promise<string[]> {
    const held = new Set(this.computers());
    return connected.filter((computerId) => !held.has(computerId));
  }

  async heldElsewhere(): Promise<boolean> {
    // No other board: a stream recorded on one is a stopped board's.
    return false;
  }

  heard(runId: string, at: number): void {
    this.last.set(runId, Math.max(at, this.last.get(runId) ?? at));
  }

  async lastHeard(open: readonly string[]): Promise<ReadonlyMap<string, number>> {
    const still = new Set(open);
    for (const runId of this.last.keys()) if (!still.has(runId)) this.last.delete(runId);
    return this.last;
  }
}
