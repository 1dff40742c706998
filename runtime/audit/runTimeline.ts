import type { DomainEvent } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';
import { describeEvent } from '../../projections/audit/describeEvent.ts';
import type { EventStore } from '../store/eventStore.ts';

/** Ids that may name a folder (docs/rules.md#tools); an audit of anything else is refused before any read. */

export type AuditedKind = 'run' | 'session';

export interface TimelineEntry {
  readonly seq: number;
  readonly at: number;
  /** `at` as UTC, `2026-01-01 12:00:30.000Z`. */
  readonly time: string;
  readonly stream: string;
  /** Who wrote it: a computer's id, or null for the board. */
  readonly owner: string | null;
  /** The event type. */
  readonly step: string;
  readonly reason: string;
  /** The seq of the input this decision answers; null for an input. */
  readonly cause: number | null;
}

export interface Timeline {
  readonly kind: AuditedKind;
  readonly id: string;
  /** Every stream of the entity, board's and computers', in order of first appearance. */
  readonly streams: readonly string[];
  readonly entries: readonly TimelineEntry[];
}

/** Refuses an id that could not name a run or session, naming the rule it breaks. */
export function checkEntityId(id: string): void {
  if (!isSafeId(id)) {
    throw new Error(`${JSON.stringify(id)} is not a run or session id: ids match ${SAFE_ID_RULE}`);
  }
}

/**
 * Everything the log says about one run (or session): the events of `run:<id>` on the board and
 * `<computer>/run:<id>` on each computer, in seq order, each with its one-line reason. Null when the
 * log holds none.
 */
export async function entityTimeline(store: Pick<EventStore, 'readEntity'>, kind: AuditedKind, id: string): Promise<Timeline | null> {
  checkEntityId(id);
  const events = await store.readEntity(`${kind}:${id}`);
  if (events.length === 0) return null;
  const streams = [...new Set(events.map((e) => e.stream))];
  return { kind, id, streams, entries: events.map(timelineEntry) };
}

/** One event as a timeline line: its time, who wrote it, the step and its one-line reason. */
export function timelineEntry(event: DomainEvent): TimelineEntry {
  return {
    seq: event.seq,
    at: event.at,
    time: new Date(event.at).toISOString().replace('T', ' '),
    stream: event.stream,
    owner: parseStream(event.stream).owner,
    step: event.type,
    reason: describeEvent(event),
    cause: event.cause,
  };
}

export function runTimeline(store: Pick<EventStore, 'readEntity'>, runId: string): Promise<Timeline | null> {
  return entityTimeline(store, 'run', runId);
}

/**
 * `time  step  reason`, one line an event, under a header naming the streams. When more than one
 * process wrote about the entity, each step says whose it is (`board`, or the computer's id).
 */
export function formatTimeline(timeline: Timeline): string {
  const several = new Set(timeline.entries.map((e) => e.owner ?? 'board')).size > 1;
  const steps = timeline.entries.map((e) => (several ? `${e.owner ?? 'board'} ${e.step}` : e.step));
  const width = Math.max(...steps.map((s) => s.length));
  const header = `${timeline.kind} ${timeline.id}: ${timeline.entries.length} event${timeline.entries.length === 1 ? '' : 's'} in ${timeline.streams.join(', ')}`;
  return [header, ...timeline.entries.map((e, i) => `${e.time}  ${steps[i]!.padEnd(width)}  ${e.reason}`)].join('\n');
}
