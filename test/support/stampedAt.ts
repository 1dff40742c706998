import { type Clock, systemClock } from '../../runtime/actors/clock.ts';

/** The system clock's timers, with every stamp at `at`: for a test that reads what was written, not when. */
export function stampedAt(at: number): Clock {
  return { now: () => at, after: (ms, fn) => systemClock.after(ms, fn) };
}
