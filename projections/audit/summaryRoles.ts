import { type DomainEvent, type EventOf, eventRoles, type TypesWhere } from '../../events/catalog.ts';
import type { SummaryPart } from '../../events/roles.ts';

/** Which part of the audit summary an event counts in (`none`: it counts in none). */
export type Role = SummaryPart;

/**
 * The types the summary counts in `R`. Each type says it in its group's table (events/roles.ts), where
 * the compiler asks it of every new type, so nothing a person would ask the summary about can land
 * without being placed.
 */
export type CountedIn<R extends Exclude<Role, 'none'>> = TypesWhere<'summary', R>;

/** Looked up once a type: the fold asks this of every event in the log. */
export const ROLES: Readonly<Record<string, Role>> = Object.fromEntries(Object.entries(eventRoles).map(([type, roles]) => [type, roles.summary]));

/** Whether the summary counts the event in `role`: it is then of a type counted there. */
export function countsIn<R extends Exclude<Role, 'none'>>(event: DomainEvent, role: R): event is EventOf<CountedIn<R>> {
  return ROLES[event.type] === role;
}
