import type { DomainEvent } from '../../events/catalog.ts';
import type { EventStore } from '../store/eventStore.ts';

export interface FoldOptions {
  /** Fold no event past this seq. */
  readonly until?: number;
  /** Rows per read; each page is folded in one go, then the event loop gets a turn. */
  readonly pageSize?: number;
  readonly onPage?: (lastSeq: number) => void;
}

/**
 * Pages through the log from `after`, handing each event to `visit`. Between pages it yields to the
 * event loop, so a rebuild of millions of events never stalls heartbeats or sockets for long.
 * Returns the seq of the last event visited (or `after` when there was none).
 */
export async function foldLog(
  store: Pick<EventStore, 'readAll'>,
  after: number,
  visit: (event: DomainEvent) => void,
  options: FoldOptions = {},
): Promise<number> {
  const pageSize = options.pageSize ?? 2000;
  const until = options.until ?? Number.POSITIVE_INFINITY;
  let last = after;
  for (;;) {
    const limit = Math.min(pageSize, until - last);
    if (limit <= 0) break;
    const page = await store.readAll(last, limit);
    // A page reads on past the rows the store skips (see EventStore.readAll): it may pass `until`.
    let past = false;
    for (const event of page) {
      if (event.seq > until) {
        past = true;
        break;
      }
      visit(event);
      last = event.seq;
    }
    options.onPage?.(last);
    if (past || page.length < limit) break;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return last;
}
