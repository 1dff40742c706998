import type { Clock } from '../runtime/actors/clock.ts';
import type { Prng } from './prng.ts';

/** The virtual epoch every world starts at. */
export const SIM_EPOCH = Date.UTC(2026, 0, 1);

/** What a task belongs to: a process life or a network link. Killing it drops its tasks, now and later. */
export class Owner {
  alive = true;
  constructor(readonly name: string) {}
  kill(): void {
    this.alive = false;
  }
}

interface Task {
  readonly due: number;
  readonly seq: number;
  readonly owner: Owner;
  readonly label: string;
  readonly run: () => void;
  /** For a life's timer: the time on that life's clock it was armed for (before any fuzz). */
  readonly intended: number | null;
  cancelled: boolean;
  /** Still on the queue: not yet taken (run or dropped). */
  queued: boolean;
}

/**
 * Virtual time: every timer of every process and every message on the network is a task here, taken
 * in (due, arrival) order. Nothing in a world waits for real time.
 */
export class Scheduler {
  now = SIM_EPOCH;
  private tasks: Task[] = [];
  private seq = 0;
  /**
   * Per owner, its queued timers not cancelled, counted by the instant each was armed for (`intended`):
   * the invariants ask after every step, for every wait of every machine, and a filter of the whole
   * queue each time was a share of the simulator's own CPU.
   */
  private readonly timers = new Map<Owner, Map<number, number>>();

  at(due: number, owner: Owner, label: string, run: () => void, intended: number | null = null): () => void {
    if (!owner.alive) return () => undefined;
    const task: Task = { due: Math.max(due, this.now), seq: this.seq++, owner, label, run, intended, cancelled: false, queued: true };
    // Binary search for the first task due later (ties keep arrival order).
    let lo = 0;
    let hi = this.tasks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.tasks[mid]!.due <= task.due) lo = mid + 1;
      else hi = mid;
    }
    this.tasks.splice(lo, 0, task);
    this.countTimer(task, 1);
    return () => {
      if (!task.cancelled) this.countTimer(task, -1);
      task.cancelled = true;
    };
  }

  /** A queued timer not cancelled counts in `timers` (a task with no `intended` is no timer). */
  private countTimer(task: Task, by: 1 | -1): void {
    if (task.intended === null || !task.queued) return;
    let counts = this.timers.get(task.owner);
    if (!counts) this.timers.set(task.owner, (counts = new Map()));
    const n = (counts.get(task.intended) ?? 0) + by;
    if (n === 0) counts.delete(task.intended);
    else counts.set(task.intended, n);
  }

  /** The next live task, taken off the queue with time moved to it; null when none is left. */
  take(until = Number.POSITIVE_INFINITY): { label: string; owner: string; run: () => void } | null {
    for (;;) {
      const task = this.tasks[0];
      if (!task || task.due > until) return null;
      this.tasks.shift();
      if (!task.cancelled) this.countTimer(task, -1);
      task.queued = false;
      if (task.cancelled || !task.owner.alive) continue;
      this.now = Math.max(this.now, task.due);
      return { label: task.label, owner: task.owner.name, run: task.run };
    }
  }

  nextDue(): number | null {
    for (const task of this.tasks) if (!task.cancelled && task.owner.alive) return task.due;
    return null;
  }

  /** How many timers `owner` has pending that were armed for `intended` on its clock. */
  timersFor(owner: Owner, intended: number): number {
    return this.timers.get(owner)?.get(intended) ?? 0;
  }

  pending(): number {
    return this.tasks.filter((t) => !t.cancelled && t.owner.alive).length;
  }
}

/** How a timer armed for `ms` really fires: a few ms early, or late (Node's timers do both). */
export type TimerFuzz = (ms: number) => number;

export const exactTimers: TimerFuzz = () => 0;

/** Timers that sometimes fire up to 3 ms early and sometimes up to 250 ms late. */
export function fuzzyTimers(prng: Prng): TimerFuzz {
  return (ms) => {
    const roll = prng.next();
    if (roll < 0.2 && ms > 3) return -prng.int(1, 3);
    if (roll > 0.8) return prng.int(1, 250);
    return 0;
  };
}

/**
 * One process life's clock: virtual time plus the machine's skew, timers on the scheduler, owned by the
 * life so a crash takes them with it.
 */
export class LifeClock implements Clock {
  constructor(
    private readonly scheduler: Scheduler,
    readonly owner: Owner,
    private readonly skew: () => number,
    private readonly fuzz: () => TimerFuzz,
  ) {}

  now(): number {
    return this.scheduler.now + this.skew();
  }

  after(ms: number, fn: () => void): () => void {
    const delay = Math.max(0, ms);
    const due = this.scheduler.now + Math.max(0, delay + this.fuzz()(delay));
    return this.scheduler.at(due, this.owner, `timer ${this.owner.name}`, fn, this.now() + delay);
  }
}
