import { codec, type DomainEvent, eventDefinitions } from '../../events/catalog.ts';
import { InvalidEventError } from '../../events/codec.ts';
import type { EventStore, FoldRow } from '../../events/store/eventStore.ts';
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

type Source = Pick<EventStore, 'readAll'> & Partial<Pick<EventStore, 'scanRows'>>;

/**
 * Pages through the log from where the replayer stands and hands it every event, then closes the last
 * input. `until` may fall inside an append: the rest of its input's decisions lie past it and are
 * compared too, or a cut decision would read as a missing one (they are not given to `visit`).
 * Returns the seq of the last event read at or before `until`.
 *
 * Rows are read undecoded when the store can: the replayer validates an event against the catalog
 * only when it reads its data, and a recorded decision found equal to the one re-derived is valid
 * already (it equals a decision the decider just made), so it skips the catalog's parse.
 */
export async function feed(store: Source, replayer: Replayer, options: FeedOptions = {}): Promise<number> {
  const pageSize = options.pageSize ?? 2000;
  const until = options.until ?? Number.POSITIVE_INFINITY;
  const visit = options.visit;
  let last = Math.min(options.from ?? Number.POSITIVE_INFINITY, replayer.lastSeq);
  let count = 0;
  const each = (event: DomainEvent, decoded: boolean): void => {
    count++;
    last = event.seq;
    if (replayer.done) return;
    if (visit) {
      visit(event);
      replayer.visit(event);
    } else replayer.visit(event, decoded);
  };
  const eachRow = (row: FoldRow): void => {
    const event = parsed(row);
    if (visit) (event as { data: unknown }).data = codec.decodeData(row.seq, row.type, event.data);
    each(event, visit !== undefined);
  };
  for (;;) {
    const limit = Math.min(pageSize, until - last);
    if (limit <= 0) break;
    count = 0;
    if (store.scanRows) await store.scanRows(last, limit, eachRow);
    else for (const event of await store.readAll(last, limit)) each(event, true);
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

/**
 * A row with its data parsed from JSON but not yet checked against the catalog (see `Replayer.visit`),
 * and without the log's bookkeeping (`version` 0, `actor` ''): `complete` reads them back for a report.
 */
function parsed(row: FoldRow): DomainEvent {
  let data: unknown;
  try {
    data = JSON.parse(row.data);
  } catch (error) {
    throw new InvalidEventError(row.seq, row.type, `data is not JSON (${(error as Error).message})`);
  }
  return { seq: row.seq, stream: row.stream, version: 0, type: TYPES.get(row.type) ?? row.type, data, at: row.at, cause: row.cause, actor: '' } as DomainEvent;
}

/**
 * The catalog's own spelling of each type. A type read from a row is a fresh string; the catalog's
 * is the one every `switch`, set and map of the deciders holds, so comparing with it is one check.
 */
const TYPES = new Map(Object.keys(eventDefinitions).map((type) => [type, type]));

/** An event as the log holds it, all columns, for one that `feed` read without its bookkeeping. */
export async function complete<E extends DomainEvent>(store: Pick<EventStore, 'readAll'>, event: E): Promise<E> {
  if (event.actor !== '') return event;
  const [full] = await store.readAll(event.seq - 1, 1);
  return full && full.seq === event.seq ? (full as E) : event;
}
