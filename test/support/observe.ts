import type { Observable } from 'rxjs';
import { onTestFinished } from 'vitest';

/** Everything an Observable emits, kept in order, with a bounded wait for the n-th item. */
export interface Recording<T> {
  readonly items: readonly T[];
  /** Resolves once `n` items arrived; fails after `ms` (real time: the source polls a file or a process). */
  untilCount(n: number, ms?: number): Promise<readonly T[]>;
  stop(): void;
}

export function record<T>(source: Observable<T>): Recording<T> {
  const items: T[] = [];
  let failure: unknown = null;
  let waiters: (() => void)[] = [];
  const wake = (): void => {
    const waiting = waiters;
    waiters = [];
    for (const w of waiting) w();
  };
  const subscription = source.subscribe({
    next: (item) => {
      items.push(item);
      wake();
    },
    error: (error) => {
      failure = error;
      wake();
    },
  });
  onTestFinished(() => subscription.unsubscribe());
  return {
    items,
    untilCount(n, ms = 5_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${items.length} of ${n} items within ${ms} ms`)), ms);
        const check = (): void => {
          if (failure) {
            clearTimeout(timer);
            reject(failure);
          } else if (items.length >= n) {
            clearTimeout(timer);
            resolve(items);
          } else {
            waiters.push(check);
          }
        };
        check();
      });
    },
    stop: () => subscription.unsubscribe(),
  };
}
