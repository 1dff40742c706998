import { messageOf } from '../../../events/thrown.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { FailureLog } from '../../runtime/untilRecorded.ts';
import type { OpenClaim } from '../boardQueries.ts';

/**
 * Heartbeats are kept in memory only (the log grows with decisions, not with time); what the log
 * records is their absence, as a `board.heartbeat.lapsed` input with the last heartbeat seen. After a
 * restart every open claim gets a fresh lease from the moment the board came back.
 */
export class LeaseMonitor {
  private readonly last = new Map<string, number>();
  private cancel: (() => void) | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly leaseMs: number,
    private readonly openClaims: () => Promise<OpenClaim[]>,
    private readonly lapsed: (runId: string, lastHeartbeatAt: number) => Promise<void>,
    /** The daemon's log: a round that could not read or record is told there, and the next round tries again. */
    private readonly log: FailureLog,
  ) {}

  start(): void {
    const every = Math.max(50, Math.min(5_000, Math.floor(this.leaseMs / 6)));
    const startedAt = this.clock.now();
    const tick = async () => {
      const now = this.clock.now();
      let open: OpenClaim[];
      try {
        open = await this.openClaims();
      } catch (error) {
        // Not an empty list: that would forget every heartbeat seen, and reap live runs next round.
        this.log(`lease monitor: the open claims could not be read (${messageOf(error)}); trying again next round`);
        return;
      }
      const stillOpen = new Set(open.map((c) => c.runId));
      for (const runId of this.last.keys()) if (!stillOpen.has(runId)) this.last.delete(runId);
      for (const claim of open) {
        const last = this.last.get(claim.runId) ?? Math.max(claim.claimedAt, startedAt);
        if (!this.last.has(claim.runId)) this.last.set(claim.runId, last);
        if (now - last > this.leaseMs) {
          this.last.delete(claim.runId);
          await this.lapsed(claim.runId, last).catch((error: unknown) => {
            // Kept (unless a heartbeat came meanwhile), so the next round records the same lapse, naming the
            // same last heartbeat, not one that says the run never beat.
            if (!this.last.has(claim.runId)) this.last.set(claim.runId, last);
            this.log(`lease monitor: the lapse of run ${claim.runId} could not be recorded (${messageOf(error)}); trying again next round`);
          });
        }
      }
    };
    const loop = () => {
      this.cancel = this.clock.after(every, () => void tick().finally(() => this.cancel !== null && loop()));
    };
    loop();
  }

  /** A heartbeat or a claim: the lease runs from now. */
  touch(runId: string): void {
    this.last.set(runId, this.clock.now());
  }

  stop(): void {
    this.cancel?.();
    this.cancel = null;
  }
}
