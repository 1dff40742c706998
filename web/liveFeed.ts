import { auditTime, buffer, connect, debounceTime, filter, groupBy, map, merge, mergeMap, type Observable, type OperatorFunction } from 'rxjs';
import type { DomainEvent } from '../events/catalog.ts';
import { type EventSummary, runOf, summarize } from './eventSummary.ts';

/** Events that arrive together go out together: one message per burst, at most every 100 ms. */
export const BATCH_MS = 100;
/** A status snapshot costs a walk of the projections: one per quarter second at most, after the burst. */
export const SNAPSHOT_MS = 250;
/** A run's group ends after this long without an event about it, so quiet runs hold no state. */
const RUN_GROUP_IDLE_MS = 60_000;

/** Items that arrive within `ms` of a batch's first one, as one array; nothing at all while idle. */
export function batched<T>(ms: number): OperatorFunction<T, T[]> {
  return (source) =>
    source.pipe(
      connect((shared) => shared.pipe(buffer(shared.pipe(auditTime(ms))))),
      filter((batch) => batch.length > 0),
    );
}

/**
 * The log as the web view reads it: the events the daemon's projections have folded (ProjectionKeeper's
 * `folds`), in order, as they fold them, and nothing before. Every page's status is read from those
 * projections, so it is sent after what called for it is in them: a subscription of the view's own
 * would hear of another writer's commit at its own poll, maybe before the projections do, and the last
 * status of a burst would then show the state before it until the next event (for seconds on a quiet board).
 */
export class LiveFeed {
  constructor(readonly events: Observable<DomainEvent>) {}

  /** For the board page: every event as a one-line summary, in batches. */
  summaries(): Observable<EventSummary[]> {
    return this.events.pipe(map(summarize), batched(BATCH_MS));
  }

  /** When the board page's status should be sent again: after a burst of events folded, or after `nudges`. */
  snapshotTimes(nudges: Observable<unknown>): Observable<unknown> {
    return merge(this.events, nudges).pipe(auditTime(SNAPSHOT_MS));
  }

  /**
   * For run pages: the events of each watched run, grouped by run so that each run's
   * entries stay in log order and are batched on their own; a run nobody watches costs a lookup.
   */
  runEntries(watched: (runId: string) => boolean): Observable<{ runId: string; events: DomainEvent[] }> {
    return this.events.pipe(
      map((event) => ({ runId: runOf(event), event })),
      filter((x): x is { runId: string; event: DomainEvent } => x.runId !== null && watched(x.runId)),
      groupBy((x) => x.runId, { duration: (group) => group.pipe(debounceTime(RUN_GROUP_IDLE_MS)) }),
      mergeMap((group) =>
        group.pipe(
          map((x) => x.event),
          batched(BATCH_MS),
          map((events) => ({ runId: group.key, events })),
        ),
      ),
    );
  }
}
