/**
 * Time enters runledger through this interface only: adapters stamp inputs with `now()`, deciders read
 * the input's `at`. Tests drive a FakeClock forward instead of sleeping.
 */
export interface Clock {
  /** This process's time line, in ms since the epoch: see `processClock`. */
  now(): number;
  /**
   * Calls `fn` about `ms` later; the returned function cancels it. Like Node's timers it may fire a
   * little before `now()` reads the time asked for: a wait that must not end early uses `wakeAt`.
   */
  after(ms: number, fn: () => void): () => void;
}

/** The longest delay a Node timer holds; a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A process's time line (docs/architecture.md#time): the wall clock read once, when the process starts,
 * carried on by the monotonic clock. Every duration read from it (a lease, a budget, a timer, two `at`s
 * of one process) is true whatever the wall clock does meanwhile: a step of it by hand or by NTP moves
 * no deadline and reaps nothing. Its stamps stay the wall time as long as the wall clock only runs (NTP
 * slews both clocks alike); after a step they keep the time line's, until the process restarts.
 */
export function processClock(wall: () => number = Date.now, monotonic: () => number = () => performance.now()): Clock {
  const anchor = wall() - monotonic();
  return {
    // Whole ms, as stamps always were; never backwards, as the monotonic clock.
    now: () => Math.floor(anchor + monotonic()),
    after(ms, fn) {
      // Node's timers run on the monotonic clock too.
      const timer = setTimeout(fn, Math.min(MAX_TIMER_MS, Math.max(0, ms)));
      timer.unref?.();
      return () => clearTimeout(timer);
    },
  };
}

export const systemClock: Clock = processClock();

/**
 * Calls `fn` once, when `clock.now()` has reached `due` (docs/rules.md#computer-behaviour, "Timers"). Node measures its
 * timers on a monotonic clock and fires them while Date.now() can still be a millisecond short, and a
 * decider reading the input's `at` would ignore such a wake-up as early, leaving the wait to last for
 * ever. So a wake-up before its time re-arms for the rest; a wait longer than a timer holds (a budget of
 * 30 days) is chained. Always asynchronous, even when `due` has passed. The returned function cancels it.
 * `fn` is handed the time the check read (never before `due`): the input it records is stamped with it,
 * not with a later read that a wall clock stepped back in between would put before `due`.
 */
export function wakeAt(clock: Clock, due: number, fn: (at: number) => void): () => void {
  let cancelled = false;
  const arm = () => clock.after(Math.min(MAX_TIMER_MS, Math.max(0, due - clock.now())), check);
  const check = () => {
    if (cancelled) return;
    const now = clock.now();
    if (now >= due) fn(now);
    else cancel = arm();
  };
  let cancel = arm();
  return () => {
    cancelled = true;
    cancel();
  };
}

interface FakeTimer {
  readonly id: number;
  readonly due: number;
  readonly fn: () => void;
}

/**
 * A clock that only moves when told to; timers fire in due order as it passes them. With
 * `firesEarlyMs`, a timer armed for longer than that fires that much early, as Node's sometimes do.
 */
export class FakeClock implements Clock {
  private current: number;
  private timers: FakeTimer[] = [];
  private nextId = 1;
  private readonly early: number;

  constructor(start = Date.UTC(2026, 0, 1), options: { firesEarlyMs?: number } = {}) {
    this.current = start;
    this.early = options.firesEarlyMs ?? 0;
  }

  now(): number {
    return this.current;
  }

  after(ms: number, fn: () => void): () => void {
    const delay = Math.max(0, ms);
    const timer = { id: this.nextId++, due: this.current + (delay > this.early ? delay - this.early : delay), fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t.id !== timer.id);
    };
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way, in order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.due <= target).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t.id !== due.id);
      this.current = Math.max(this.current, due.due);
      due.fn();
    }
    this.current = target;
  }

  /**
   * Moves time forward by `ms` at once, as a process frozen or asleep meanwhile finds it: every timer that
   * fell due fires after the jump, late, in due order.
   */
  jump(ms: number): void {
    this.current += ms;
    this.advance(0);
  }

  pendingTimers(): number {
    return this.timers.length;
  }
}
