import type { EventData } from '../../events/catalog.ts';
import type { Clock } from '../../runtime/actors/clock.ts';

export type RefusalSummary = EventData<'board.requests.refused'>;

/** A minute: nobody without a token makes the log grow by more than one event in it (docs/rules.md#the-log). */
export const REFUSAL_WINDOW_MS = 60_000;

/**
 * Counts the refusals of callers that proved no token, and hands on one summary per window: the
 * first refusal opens a window, its end (or `flush`, when the board stops) records what it counted.
 */
export class RefusalCounter {
  private window: { count: number; reasons: Record<string, number>; first_at: number; last_at: number } | null = null;
  /** Cancels the open window's end: its timer is on the clock, so a test ends it with a FakeClock. */
  private cancelEnd: (() => void) | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly record: (summary: RefusalSummary) => Promise<void>,
  ) {}

  count(code: string): void {
    const at = this.clock.now();
    if (this.window === null) {
      this.window = { count: 0, reasons: {}, first_at: at, last_at: at };
      this.cancelEnd = this.clock.after(REFUSAL_WINDOW_MS, () => void this.flush());
    }
    const window = this.window;
    window.count++;
    window.reasons[code] = (window.reasons[code] ?? 0) + 1;
    window.last_at = at;
  }

  /** Records the open window's summary, if any: at its end, and when the board stops. */
  async flush(): Promise<void> {
    this.cancelEnd?.();
    this.cancelEnd = null;
    const window = this.window;
    this.window = null;
    if (window !== null) await this.record(window);
  }
}
