import { Observable, type Subscription } from 'rxjs';
import type { DomainEvent } from '../../events/catalog.ts';
import { LogUnwritableError } from './logUnwritable.ts';

type ReadAll = (after: number, limit: number) => Promise<DomainEvent[]>;

/**
 * What wakes a follower: the events this process just committed (contiguous, in seq order; followers
 * are handed one deep-frozen copy of them, shared), or nothing in particular (a poll tick: another
 * process may have appended).
 */
export type Wake = readonly DomainEvent[] | null;

/**
 * Catch-up then live, as one Observable. There is one reader position per subscriber, and it only
 * moves forward, so the seam between catch-up and live can neither lose nor repeat an event. A
 * commit of this process that directly follows that position is handed over as it is (frozen, so a
 * fold may keep its data and none can change it under another); anything else — a poll tick, a
 * commit past a gap — reads the log from the position.
 */
export function followLog(readAll: ReadAll, wake: Observable<Wake>, after: number, pageSize = 1000): Observable<DomainEvent> {
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
        // A log that cannot be read now (a PostgreSQL server restarting, the network gone) is read again
        // from the same position on the next wake (the poll goes on): a subscriber outlives an outage.
        if (!(error instanceof LogUnwritableError)) subscriber.error(error);
      } finally {
        reading = false;
      }
    };

    const handOver = (committed: readonly DomainEvent[]): boolean => {
      if (reading || committed.length === 0 || committed[0]!.seq > last + 1) return false;
      for (const event of sharedCopies(committed)) {
        if (closed) return true;
        if (event.seq <= last) continue;
        last = event.seq;
        subscriber.next(event);
      }
      return true;
    };
    const wakeups: Subscription = wake.subscribe((committed) => {
      if (committed && handOver(committed)) return;
      void drain();
    });
    void drain();
    return () => {
      closed = true;
      wakeups.unsubscribe();
    };
  });
}

/** Events a store hands over already frozen all the way down and apart from the writer's objects (see `sharedAsIs`). */
const frozenApart = new WeakSet<DomainEvent>();

/**
 * Marks a committed event as one followers may share as it is: frozen all the way down, and holding no
 * object of the writer's (a decoder's copy, as a read gives the row back). Its commit is then handed
 * over without a copy of it made again.
 */
export function sharedAsIs(event: DomainEvent): DomainEvent {
  frozenApart.add(event);
  return event;
}

/** Each commit's shared copies, made by the first follower handed it: none when nobody follows. */
const copiesOfCommit = new WeakMap<readonly DomainEvent[], readonly DomainEvent[]>();

function sharedCopies(committed: readonly DomainEvent[]): readonly DomainEvent[] {
  let copies = copiesOfCommit.get(committed);
  if (!copies) {
    copies = committed.map(sharedCopy);
    copiesOfCommit.set(committed, copies);
  }
  return copies;
}

/**
 * The copy of a committed event that followers share: cloned once, away from the writer's objects
 * (its state may keep and later change them), and frozen all the way down.
 */
function sharedCopy(event: DomainEvent): DomainEvent {
  if (frozenApart.has(event)) return event;
  // The copy of `data` loses, for the compiler, its pairing with `type`: it is the same value, frozen.
  return Object.freeze({ ...event, data: deepFreeze(structuredClone(event.data)) }) as DomainEvent;
}

/** `value` frozen all the way down, in place. */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}
