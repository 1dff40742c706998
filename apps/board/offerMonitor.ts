import { messageOf } from '../../events/thrown.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import type { FailureLog } from '../../runtime/actors/untilRecorded.ts';

/** A lane's next turn left unclaimed this long with its lane free is offered again. */
export const OFFER_AGAIN_MS = 60_000;
/** Each later offer of the same run waits twice as long as the one before, up to this. */
const MAX_AGAIN_MS = 3_600_000;
const ROUND_MS = 5_000;
/**
 * Stale runs handed to the board in one round, the most overdue first; the others wait for the next
 * rounds. A board that restarts under a backlog finds every run's wait due at once: each stale run may
 * move a lane and send a frame, and thousands in one round would stall the board and flood the streams.
 */
export const MAX_STALE_A_ROUND = 20;

interface Watched {
  /** Seen unclaimed with its lane free since. */
  readonly since: number;
  /** When it is next handed over as stale, and the wait before that. */
  due: number;
  wait: number;
}

/**
 * A run is pushed when it is submitted, when a turn of its lane ends, and when a computer connects.
 * A computer that skipped it (its claims failed for a while) while its stream stayed up gets none of
 * these, and the run would wait for ever. So, kept in memory as the lease monitor keeps heartbeats:
 * a lane's next turn seen unclaimed with its lane free for OFFER_AGAIN_MS is recorded as stale
 * (`board.offer.stale`), which offers it again; then after twice as long each time, so a run that only
 * waits for a free slot costs a few events over hours, not one per round. After a restart every
 * run's wait starts from the board's start. With one offer at a time it is also how a run leaves a
 * computer that acked its offer and never claims it (docs/rules.md#dispatch).
 */
export class OfferMonitor {
  private readonly watched = new Map<string, Watched>();
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
      const due: [string, Watched][] = [];
      for (const runId of idle) {
        const seen = this.watched.get(runId);
        if (!seen) this.watched.set(runId, { since: now, due: now + OFFER_AGAIN_MS, wait: OFFER_AGAIN_MS });
        else if (now >= seen.due) due.push([runId, seen]);
      }
      due.sort((a, b) => a[1].due - b[1].due);
      for (const [runId, seen] of due.slice(0, MAX_STALE_A_ROUND)) {
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
