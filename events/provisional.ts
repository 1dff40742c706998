import type { DomainEvent, NewDomainEvent } from './catalog.ts';

/**
 * An event as it will be stored, before the log numbers it: seq and version 0, no writer yet. Folds,
 * effects and descriptions read neither: those are the log's bookkeeping, not facts about the domain.
 * `cause` is the seq of the input it answers, when that is known (a decision re-derived by `replay`).
 */
export function provisional(event: NewDomainEvent, cause: number | null = null): DomainEvent {
  return { ...event, seq: 0, version: 0, cause, actor: '' } as DomainEvent;
}
