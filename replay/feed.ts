import type { DomainEvent } from '../events/catalog.ts';
import type { EventStore, FoldRow } from '../runtime/store/eventStore.ts';
import type { LogQueries } from '../runtime/store/logQueries.ts';
import type { Replayer } from './replayer.ts';

export interface FeedOptions {
  /** Read from this seq on when it is before the replayer's own start (a projection starts earlier). */
  readonly from?: number;
  /** Read no event past this seq, except the rest of an append cut by it (see below). */
  readonly until?: number;
  readonly pageSize?: number;
  /** Sees every event, decoded, before the replayer does (a projection folded alongside). */
  readonly visit?: (event: DomainEvent) => void;
  /** After each page: progress, snapshots to write. The event loop gets a turn between pages. */
  readonly onPage?: (lastSeq: number) => void | Promise<void>;
}

type Source = Pick<EventStore, 'readAll'> & Partial<Pick<LogQueries, 'scanRows'>>;

/**
 * Pages through the log from where the replayer stands and hands it every event, then closes the last
 * input. `until` may fall inside an append: the rest of its input's decisions lie past it and are
 * compared too, or a cut decision would read as a missing one (they are not given to `visit`).
 * Returns the seq of the last event read at or before `until`.
 *
 * Rows are handed to the replayer undecoded when the store can, for it to read only what it needs
 * (see `Replayer.visitRow`).
 */
export async function feed(store: Source, replayer: Replayer, options: FeedOptions = {}): Promise<number> {
  const pageSize = options.pageSize ?? 2000;
  const until = options.until ?? Number.POSITIVE_INFINITY;
  const visit = options.visit;
  let last = Math.min(options.from ?? Number.POSITIVE_INFINITY, replayer.lastSeq);
  let count = 0;
  const each = (event: DomainEvent): void => {
    count++;
    last = event.seq;
    if (replayer.done) return;
    visit?.(event);
    replayer.visit(event);
  };
  const eachRow = (row: FoldRow): void => {
    count++;
    last = row.seq;
    if (replayer.done) return;
    if (!visit) {
      replayer.visitRow(row);
      return;
    }
    const event = replayer.read(row);
    visit(event);
    replayer.visit(event);
  };
  for (;;) {
    const limit = Math.min(pageSize, until - last);
    if (limit <= 0) break;
    count = 0;
    if (store.scanRows) await store.scanRows(last, limit, eachRow);
    else for (const event of await store.readAll(last, limit)) each(event);
    await options.onPage?.(last);
    if (count < limit || replayer.done) break;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const cut = replayer.openInput;
  if (cut !== null && options.until !== undefined && !replayer.done) {
    for (let after = last, more = true; more; ) {
      const page = await store.readAll(after, 100);
      more = page.length === 100;
      for (const event of page) {
        if (event.cause !== cut) {
          more = false;
          break;
        }
        replayer.visit(event);
        after = event.seq;
      }
    }
  }
  replayer.finish();
  return last;
}

/** An event as the log holds it, all columns, for one that `feed` read without its bookkeeping. */
export async function complete<E extends DomainEvent>(store: Pick<EventStore, 'readAll'>, event: E): Promise<E> {
  if (event.actor !== '') return event;
  const [full] = await store.readAll(event.seq - 1, 1);
  // The same row read again, with its bookkeeping: of the same type as `event`.
  return full && full.seq === event.seq ? (full as E) : event;
}
