import { type Clock, systemClock } from '../../runtime/actors/clock.ts';

/**
 * The system clock moved on by `jump`: short waits are real timers (heartbeats, pushes), a wait of a
 * minute or more (the checkpoints', the retention round's) is held until a jump passes its due time,
 * then fired, in due order.
 */
export class JumpingClock implements Clock {
  private offset: number;
  private held: { due: number; fn: () => void }[] = [];
  constructor(start: number) {
    this.offset = start - Date.now();
  }
  now = (): number => Date.now() + this.offset;
  after = (ms: number, fn: () => void): (() => void) => {
    if (ms < 60_000) return systemClock.after(ms, fn);
    const timer = { due: this.now() + ms, fn };
    this.held.push(timer);
    return () => {
      this.held = this.held.filter((t) => t !== timer);
    };
  };
  jump(ms: number): void {
    this.offset += ms;
    const due = this.held.filter((t) => t.due <= this.now()).sort((a, b) => a.due - b.due);
    this.held = this.held.filter((t) => !due.includes(t));
    for (const t of due) t.fn();
  }
}
