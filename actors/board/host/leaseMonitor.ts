import { messageOf } from '../../../events/thrown.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { FailureLog } from '../../runtime/untilRecorded.ts';
import type { OpenClaim } from '../boardQueries.ts';
import type { BoardPeers } from './peers/boardPeers.ts';

/**
 * Heartbeats are kept out of the log (it grows with decisions, not with time): in memory on a board
 * alone, in a table every board of a PostgreSQL log writes (BoardPeers). What the log records is their
 * absence, as a `board.heartbeat.lapsed` input with the last heartbeat seen, recorded by the board that
 * holds the chores' lease, whichever board heard the run. After a restart, or once it holds the lease
 * again after a break, every open claim gets a fresh lease from that moment, unless a heartbeat was heard since.
 */
export class LeaseMonitor {
  private cancel: (() => void) | null = null;

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
    // Since when it has held the chores without a break: from its start, then from each round that finds
    // the lease held again. Meanwhile it read no heartbeats, and on a shared log those of a board whose
    // writes failed (the database full, the cause of the lease's loss) may reach the table only now.
    let heldSince: number | null = this.clock.now();
    const tick = async () => {
      if (!this.heartbeats.holdsChores()) {
        heldSince = null;
        return;
      }
      heldSince ??= this.clock.now();
      const startedAt = heldSince;
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
      const now = this.clock.now();
      for (const claim of open) {
        const last = Math.max(heard.get(claim.runId) ?? 0, claim.claimedAt, startedAt);
        if (now - last <= this.leaseMs) continue;
        // Not recorded: the next round finds the same last heartbeat (unless one came), and records it then.
        await this.lapsed(claim.runId, last).catch((error: unknown) => {
          this.log(`lease monitor: the lapse of run ${claim.runId} could not be recorded (${messageOf(error)}); trying again next round`);
        });
      }
    };
    const loop = () => {
      this.cancel = this.clock.after(every, () => void tick().finally(() => this.cancel !== null && loop()));
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
