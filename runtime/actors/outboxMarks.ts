import { implicitMark, type Ledger, markDue } from '../../actors/outboxLedger.ts';
import { foldMark, type OutboxMark } from '../../actors/outboxMark.ts';
import type { EventStore } from '../store/eventStore.ts';
import type { Clock } from './clock.ts';

/**
 * And at least this often while the cursor moves: a quiet daemon's marks would otherwise lag a few days
 * of its events behind, and retention cuts no further than the lowest mark (docs/retention.md#the-cut).
 */
export const MARK_EVERY_MS = 60_000;

/**
 * Saves an outbox's mark (outboxMark.ts) in the checkpoints, so the next start neither reads the
 * outbox's whole stream nor the log from its last take: every MARK_EVERY events the cursor moves
 * (outboxLedger.ts), every MARK_EVERY_MS while it moves, and once more at a stop.
 */
export class OutboxMarks {
  private saving = false;
  private stopped = false;
  private cancelTimer: (() => void) | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly stream: string,
    private readonly clock: Pick<Clock, 'after'>,
    /** With implicit takes, what is pending is known in memory, up to the cursor: nothing to fold. */
    private readonly implicit: boolean,
    private readonly ledger: () => Ledger,
    private readonly marked: (mark: OutboxMark) => void,
  ) {}

  /** Saves a mark when the cursor moved MARK_EVERY events past the last one. */
  whenDue(): void {
    if (markDue(this.ledger()) && !this.saving) void this.save();
  }

  /** A mark every MARK_EVERY_MS while the cursor moved, as the projections' checkpoints every minute. */
  byTime(): void {
    if (this.cancelTimer || this.stopped) return;
    const arm = () => {
      this.cancelTimer = this.clock.after(MARK_EVERY_MS, () => {
        if (this.stopped) return;
        if (markDue(this.ledger(), true) && !this.saving) void this.save();
        arm();
      });
    };
    arm();
  }

  /** Saves no more by time; where the cursor got to is saved for the next start (a mark not saved, the log closing first, is only late). */
  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    if (markDue(this.ledger(), true)) void this.save();
  }

  /** Saves where the cursor stands and the stream's fold up to now (read from the last mark on). */
  async save(): Promise<void> {
    if (this.saving) return;
    this.saving = true;
    try {
      const ledger = this.ledger();
      const mark = this.implicit
        ? implicitMark(ledger)
        : foldMark(structuredClone(ledger.marked), await this.store.readStream(this.stream, ledger.marked.version));
      mark.cursor = Math.max(mark.cursor, ledger.cursor);
      await this.store.checkpoints.save({ name: this.stream, seq: mark.cursor, state: JSON.stringify(mark) });
      this.marked(mark);
    } catch {
      // Only late: the next save, or the next start reading a little more, makes up for it.
    } finally {
      this.saving = false;
    }
  }
}
