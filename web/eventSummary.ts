import type { DomainEvent } from '../events/catalog.ts';
import { parseStream } from '../events/envelope.ts';
import { type TimelineEntry, timelineEntry } from '../runtime/audit/runTimeline.ts';

/** One line of the board page's activity list: a timeline entry, plus the run and lane it concerns. */
export interface EventSummary extends TimelineEntry {
  readonly runId: string | null;
  readonly lane: string | null;
  /** The log's own bookkeeping, not a decision about work: hidden from "Recent decisions" unless asked for. */
  readonly bookkeeping: boolean;
}

/**
 * Bookkeeping: the outbox's `outbox.taken`, `outbox.performed` and `outbox.interrupted` move its
 * cursor over effects whose decisions are already in the log (a push, a hook), so each says again
 * what the decision it follows said, and a busy board writes two of them for every decision.
 */
export function isBookkeeping(type: string): boolean {
  return type.startsWith('outbox.');
}

/**
 * The run an event concerns, as `runledger audit` finds it: a `run:<id>` stream (the board's or a
 * computer's), or a `runId` in its data (queue decisions live in their lane's stream).
 */
export function runOf(event: DomainEvent): string | null {
  const named = 'runId' in event.data ? event.data.runId : undefined;
  if (typeof named === 'string') return named;
  const { kind, id } = parseStream(event.stream);
  return kind === 'run' ? id : null;
}

export function summarize(event: DomainEvent): EventSummary {
  const lane = 'lane' in event.data ? event.data.lane : undefined;
  const { kind, id } = parseStream(event.stream);
  return {
    ...timelineEntry(event),
    runId: runOf(event),
    lane: typeof lane === 'string' ? lane : kind === 'lane' ? id : null,
    bookkeeping: isBookkeeping(event.type),
  };
}
