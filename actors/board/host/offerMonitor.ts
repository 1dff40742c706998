import { messageOf } from '../../../events/thrown.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { FailureLog } from '../../runtime/untilRecorded.ts';

/** A lane's next turn left unclaimed this long with its lane free is offered again. */
export const OFFER_AGAIN_MS = 60_000;
/** Each later offer of the same run waits twice as long as the one before, up to this. */
const MAX_AGAIN_MS = 3_600_000;
const ROUND_MS = 5_000;

/**
 * A run is pushed when it is submitted, when a turn of its lane ends, and when a computer connects.
 * A computer that skipped it (its claims failed for a while) while its stream stayed up gets none of
 * these, and the run would wait for ever. So, kept in memory as the lease monitor keeps heartbeats:
 * a lane's next turn seen unclaimed with its lane free for OFFER_AGAIN_MS is recorded as stale
 * (`board.offer.stale`), which offers it again; then after twice as long each time, so a run that only
 * waits for a free slot costs a few events over hours, not one per round. After a restart every
 * run's wait starts from the board's start.
 */
export class OfferMonitor {
  private readonly watched = new Map<string, { since: number; due: number; wait: number }>();
  private cancel: (() => void) | null = null;

  constructor(
    private readonly clock: Clock,
    /** The runs to watch now (`idleNextTurns`). */
    private readonly idle: () => Promise<string[]>,
    private readonly stale: (runId: string, unclaimedSince: number) => Promise<void>,
    private readonly log: FailureLog,
  ) {}

  start(): void {
    const tick = async () => {
      const now = this.clock.now();
      let idle: string[];
      try {
        idle = await this.idle();
      } catch (error) {
        this.log(`offer monitor: the unclaimed runs could not be read (${messageOf(error)}); trying again next round`);
        return;
      }
      const still = new Set(idle);
      for (const runId of this.watched.keys()) if (!still.has(runId)) this.watched.delete(runId);
      for (const runId of idle) {
        const seen = this.watched.get(runId);
        if (!seen) {
          this.watched.set(runId, { since: now, due: now + OFFER_AGAIN_MS, wait: OFFER_AGAIN_MS });
          continue;
        }
        if (now < seen.due) continue;
        try {
          await this.stale(runId, seen.since);
          seen.wait = Math.min(seen.wait * 2, MAX_AGAIN_MS);
          seen.due = this.clock.now() + seen.wait;
        } catch (error) {
          // Still due: the next round records it.
          this.log(`offer monitor: the stale offer of run ${runId} could not be recorded (${messageOf(error)}); trying again next round`);
        }
      }
    };
    const loop = () => {
      this.cancel = this.clock.after(ROUND_MS, () => void tick().finally(() => this.cancel !== null && loop()));
    };
    loop();
  }

  stop(): void {
    this.cancel?.();
    this.cancel = null;
  }
}
