import { Observable, type Subscription } from 'rxjs';
import type { DomainEvent } from '../catalog.ts';

type ReadAll = (after: number, limit: number) => Promise<DomainEvent[]>;

/**
 * Catch-up then live, as one Observable. Every wake-up (a local commit, a poll tick) reads the log
 * from the last seq this subscriber saw, so the seam between catch-up and live cannot lose or repeat
 * an event: there is only one reader position, and it only moves forward.
 */
export function followLog(readAll: ReadAll, wake: Observable<unknown>, after: number, pageSize = 1000): Observable<DomainEvent> {
  return new Observable<DomainEvent>((subscriber) => {
    let last = after;
    let reading = false;
    let wokenWhileReading = false;
    let closed = false;

    const drain = async (): Promise<void> => {
      if (reading) {
        wokenWhileReading = true;
        return;
      }
      reading = true;
      try {
        do {
          wokenWhileReading = false;
          for (;;) {
            const page = await readAll(last, pageSize);
            for (const event of page) {
              if (closed) return;
              last = event.seq;
              subscriber.next(event);
            }
            if (page.length < pageSize) break;
          }
        } while (wokenWhileReading && !closed);
      } catch (error) {
        subscriber.error(error);
      } finally {
        reading = false;
      }
    };

    const wakeups: Subscription = wake.subscribe(() => void drain());
    void drain();
    return () => {
      closed = true;
      wakeups.unsubscribe();
    };
  });
}
