import type { NewEvent } from '../../events/envelope.ts';

/** The time every test event carries unless a test moves a clock: 2026-01-01, as FakeClock starts. */
export const T0 = Date.UTC(2026, 0, 1);

/** A decision-shaped event whose `total` a test uses as a unique mark to find it again in the log. */
export function bumped(stream: string, total: number, at = T0): NewEvent {
  return { stream, type: 'counter.bumped', data: { total }, at };
}

export function bumpRequested(stream: string, by: number, limit: number, at = T0): NewEvent {
  return { stream, type: 'counter.bump.requested', data: { by, limit }, at };
}

export function milestone(stream: string, total: number, at = T0): NewEvent {
  return { stream, type: 'counter.milestone.reached', data: { total }, at };
}

/** 1..n, the shape a gapless sequence of seqs or versions must have. */
export function oneTo(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}
