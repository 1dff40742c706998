import { auditTime, buffer, connect, debounceTime, filter, groupBy, map, mergeMap, type Observable, type OperatorFunction } from 'rxjs';
import type { DomainEvent } from '../events/catalog.ts';
import { type EventSummary, isBookkeeping, runOf, summarize } from './eventSummary.ts';

/** Events that arrive together go out together: one message per burst, at most every 100 ms. */
export const BATCH_MS = 100;
/** A status snapshot costs a walk of the projections: one per quarter second at most, after the burst (and see Pacer). */
export const SNAPSHOT_MS = 250;
/** The share of the board's time the board page's status may take: on a board of 50,000 runs a walk is long, and it is made less often. */
export const SNAPSHOT_SHARE = 0.02;
/** However long a walk took (a cold start, a pause of the collector, a loaded machine), the next is no further off than this. */
export const SNAPSHOT_MAX_MS = 3_000;
/** What a board page is sent of a burst, and of the past when it connects: the newest decisions (and bookkeeping), this many of each. */
export const RECENT_EVENTS = 40;
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

  /**
   * For the board page: the newest events of each burst as one-line summaries, a batch per quarter
   * second at most (the page lists the newest few; a drain writes thousands a second), and how many
   * were left out.
   */
  summaries(): Observable<{ events: EventSummary[]; dropped: number }> {
    return this.events.pipe(
      batched(SNAPSHOT_MS),
      map((events) => {
        const kept = newestOfEach(events, (e) => isBookkeeping(e.type));
        return { events: kept.map(summarize), dropped: events.length - kept.length };
      }),
    );
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

/** The newest `RECENT_EVENTS` decisions and the newest as many bookkeeping entries, in log order. */
export function newestOfEach<T extends { seq: number }>(items: readonly T[], bookkeeping: (item: T) => boolean): T[] {
  const decisions = items.filter((s) => !bookkeeping(s)).slice(-RECENT_EVENTS);
  const kept = items.filter(bookkeeping).slice(-RECENT_EVENTS);
  return [...decisions, ...kept].sort((a, b) => a.seq - b.seq);
}

/**
 * Runs a costly task (the board page's status, a walk of the projections) when asked, at most once
 * per `minMs` after the ask, and spaced so that its runs take at most `share` of the time (but never
 * more than `maxMs` apart): a board of 50,000 runs is drawn less often, not at the cost of its drain.
 */
export class Pacer {
  private timer: NodeJS.Timeout | null = null;
  private earliest = 0;

  constructor(
    private readonly task: () => void,
    private readonly minMs = SNAPSHOT_MS,
    private readonly share = SNAPSHOT_SHARE,
    private readonly maxMs = SNAPSHOT_MAX_MS,
  ) {}

  /** Runs the task after `minMs`, or later if its last run was long; asks meanwhile are one. */
  ask(): void {
    if (this.timer !== null) return;
    const wait = Math.max(this.minMs, this.earliest - performance.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.now();
    }, wait);
  }

  /** Runs the task at once (a page joining needs its view now), counting its cost as any run's. */
  now(): void {
    const started = performance.now();
    try {
      this.task();
    } finally {
      this.earliest = started + Math.min(this.maxMs, (performance.now() - started) / this.share);
    }
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
