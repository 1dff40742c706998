import { describe, expect, it } from 'vitest';
import { FakeClock, processClock } from '../../runtime/actors/clock.ts';

describe('FakeClock: time moves only when told to', () => {
  it('given timers set out of order, when the clock advances past them, then they fire in due order, each seeing its own due time', () => {
    const clock = new FakeClock(1_000);
    const fired: [string, number][] = [];
    clock.after(300, () => fired.push(['c', clock.now()]));
    clock.after(100, () => fired.push(['a', clock.now()]));
    clock.after(200, () => fired.push(['b', clock.now()]));

    clock.advance(1_000);

    expect(fired).toEqual([
      ['a', 1_100],
      ['b', 1_200],
      ['c', 1_300],
    ]);
    expect(clock.now()).toBe(2_000);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('given timers due at the same time, then they fire in the order they were set', () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    for (const name of ['first', 'second', 'third']) clock.after(50, () => fired.push(name));

    clock.advance(50);

    expect(fired).toEqual(['first', 'second', 'third']);
  });

  it('given a partial advance, then only the timers due by then fire and the rest wait', () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.after(10, () => fired.push(10));
    clock.after(30, () => fired.push(30));

    clock.advance(20);
    expect(fired).toEqual([10]);
    expect(clock.pendingTimers()).toBe(1);

    clock.advance(9);
    expect(fired).toEqual([10]);
    clock.advance(1);
    expect(fired).toEqual([10, 30]);
  });

  it('given a timer that sets another within the advance, then the new one fires too, in due order', () => {
    const clock = new FakeClock(0);
    const fired: [string, number][] = [];
    clock.after(10, () => {
      fired.push(['outer', clock.now()]);
      clock.after(5, () => fired.push(['inner', clock.now()]));
    });
    clock.after(12, () => fired.push(['between', clock.now()]));

    clock.advance(100);

    expect(fired).toEqual([
      ['outer', 10],
      ['between', 12],
      ['inner', 15],
    ]);
  });

  it('given a cancelled timer, then it never fires', () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    const cancel = clock.after(10, () => fired.push('cancelled'));
    clock.after(10, () => fired.push('kept'));

    cancel();
    clock.advance(10);

    expect(fired).toEqual(['kept']);
  });

  it('given a negative delay, then the timer is due now and fires on the next advance, even by 0', () => {
    const clock = new FakeClock(500);
    const fired: number[] = [];
    clock.after(-5, () => fired.push(clock.now()));

    clock.advance(0);

    expect(fired).toEqual([500]);
  });

  it('given no start, then it starts at 2026-01-01 UTC; a process clock reads the wall clock', () => {
    expect(new FakeClock().now()).toBe(Date.UTC(2026, 0, 1));
    // A process's time line is the wall clock at its start carried on by the monotonic clock: at first it
    // reads the wall clock. Later it need not (docs/architecture.md#time: a machine asleep or paused stops
    // the monotonic clock, as a test worker's VM paused for a second once did), so a clock made now is read.
    expect(Math.abs(processClock().now() - Date.now())).toBeLessThan(50);
  });
});
