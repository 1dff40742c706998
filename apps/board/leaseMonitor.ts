import type { OpenClaim } from '../../actors/board/boardQueries.ts';
import { messageOf } from '../../events/thrown.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import type { FailureLog } from '../../runtime/actors/untilRecorded.ts';
import type { BoardPeers } from './peers/boardPeers.ts';

/** What the monitor last saw of an open claim: the heartbeat value read, and since when it has not changed. */
interface Watched {
  readonly beat: number | undefined;
  readonly since: number;
}

/**
 * Heartbeats are kept out of the log (it grows with decisions, not with time): in memory on a board
 * alone, in a table every board of a PostgreSQL log writes (BoardPeers). What the log records is their
 * absence, as a `board.heartbeat.lapsed` input with the last heartbeat seen, recorded by the board that
 * holds the chores' lease, whichever board heard the run.
 *
 * Silence is measured on this process's own time line (docs/architecture.md#time): a run lapses when the
 * heartbeat value read for it has not changed for longer than the lease, as this monitor saw it. The
 * value itself is only compared with the one read before, never with this board's clock, so a clock
 * stepped on this board, on the board that heard the beat or on the database reaps nothing alive and
 * keeps nothing dead. A claim is first watched from when the monitor first reads it: after a restart, or
 * once it holds the chores again after a break, every open claim gets a fresh lease from then. A round
 * that fires far later than asked means this process was away (frozen, its machine asleep, its event
 * loop held): it heard no heartbeat meanwhile, and the computers that sent some are not the silent ones,
 * so the time away counts in no lease.
 */
export class LeaseMonitor {
  private cancel: (() => void) | null = null;
  private readonly watched = new Map<string, Watched>();

  constructor(
    private readonly clock: Clock,
    private readonly leaseMs: number,
    private readonly heartbeats: Pick<BoardPeers, 'heard' | 'lastHeard' | 'holdsChores'>,
    private readonly openClaims: () => Promise<OpenClaim[]>,
    private readonly lapsed: (runId: string, lastHeartbeatAt: number) => Promise<void>,
    /** The daemon's log: a round that could not read or record is told there, and the next round tries again. */
    private readonly log: FailureLog,
  ) {}

  start(): void {
    const every = Math.max(50, Math.min(5_000, Math.floor(this.leaseMs / 6)));
    // A round this much later than asked is a time away, not a slow round.
    const awayAfterMs = Math.max(every, 1_000);
    // When the last round read (or the watch began; null: it begins this round): a beat or claim stamped
    // between then and this round's read is taken at its stamp (exact when this process stamped it), any
    // other (another clock's stamp) at the last read.
    let lastRead: number | null = this.clock.now();
    const tick = async (armedAt: number) => {
      const firedAt = this.clock.now();
      const lateMs = firedAt - armedAt - every;
      if (lateMs > awayAfterMs && this.watched.size > 0) {
        // The time away is not counted against anyone: each silence resumes where it stood. (Not a fresh
        // lease: a loop held up round after round, by load, still reaps the dead, only later.)
        this.log(`lease monitor: this process was away for ${Math.round(lateMs / 1000)} s (frozen or asleep): not counted in any lease`);
        for (const [runId, seen] of this.watched) this.watched.set(runId, { beat: seen.beat, since: seen.since + lateMs });
        lastRead = firedAt;
      }
      if (!this.heartbeats.holdsChores()) {
        // Meanwhile it reads no heartbeats, and on a shared log those of a board whose writes failed (the
        // database full, the cause of the lease's loss) may reach the table only once it holds again.
        this.watched.clear();
        lastRead = null;
        return;
      }
      let open: OpenClaim[];
      let heard: ReadonlyMap<string, number>;
      try {
        open = await this.openClaims();
        heard = await this.heartbeats.lastHeard(open.map((c) => c.runId));
      } catch (error) {
        // Not an empty list: that would reap live runs whose heartbeats were not read.
        this.log(`lease monitor: the open claims could not be read (${messageOf(error)}); trying again next round`);
        return;
      }
      const readAt = this.clock.now();
      const from = lastRead ?? firedAt;
      const at = (stamp: number) => (stamp >= from && stamp <= readAt ? stamp : from);
      const still = new Set<string>();
      for (const claim of open) {
        still.add(claim.runId);
        const beat = heard.get(claim.runId);
        const seen = this.watched.get(claim.runId);
        if (seen === undefined || changed(seen.beat, beat)) {
          this.watched.set(claim.runId, { beat, since: at(beat ?? claim.claimedAt) });
          continue;
        }
        // Measured up to the round's start: every beat heard before it has been read.
        if (firedAt - seen.since <= this.leaseMs) continue;
        // Not recorded: the next round finds the same last heartbeat (unless one came), and records it then.
        await this.lapsed(claim.runId, seen.since).catch((error: unknown) => {
          this.log(`lease monitor: the lapse of run ${claim.runId} could not be recorded (${messageOf(error)}); trying again next round`);
        });
      }
      for (const runId of this.watched.keys()) if (!still.has(runId)) this.watched.delete(runId);
      lastRead = readAt;
    };
    // A shared table's beats come mapped through the clock offset measured at each renewal, which moves by
    // a round trip's error: only a move larger than that is a new beat (two beats are a second apart at least).
    const jitterMs = Math.min(500, this.leaseMs / 4);
    const changed = (before: number | undefined, after: number | undefined) =>
      before === undefined || after === undefined ? before !== after : Math.abs(after - before) > jitterMs;
    const loop = () => {
      const armedAt = this.clock.now();
      this.cancel = this.clock.after(every, () => void tick(armedAt).finally(() => this.cancel !== null && loop()));
    };
    loop();
  }

  /** A heartbeat or a claim: the lease runs from now. */
  touch(runId: string): void {
    this.heartbeats.heard(runId, this.clock.now());
  }

  stop(): void {
    this.cancel?.();
    this.cancel = null;
  }
}
