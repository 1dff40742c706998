import type { DomainEvent, NewDomainEvent } from './catalog.ts';

/**
 * An event as it will be stored, before the log numbers it: seq and version 0, no writer yet. Folds,
 * effects and descriptions read neither: those are the log's bookkeeping, not facts about the domain.
 * `cause` is the seq of the input it answers, when that is known (a decision re-derived by `replay`).
 */
export function provisional(event: NewDomainEvent, cause: number | null = null): DomainEvent {
  // Built field by field, not spread: one shape for every event, as every decision of a process folds its answers through here.
  return { seq: 0, stream: event.stream, version: 0, type: event.type, data: event.data, at: event.at, cause, actor: '' } as DomainEvent;
}
