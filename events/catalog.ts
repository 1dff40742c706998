import type { z } from 'zod';
import { adoptionEvents, adoptionRoles } from './adoptionEvents.ts';
import { boardEvents, boardRoles } from './boardEvents.ts';
import { EventCodec } from './codec.ts';
import { edgeEvents, edgeRoles } from './edgeEvents.ts';
import type { NewEvent, StoredEvent } from './envelope.ts';
import { executionEvents, executionRoles } from './executionEvents.ts';
import { hookEvents, hookRoles } from './hookEvents.ts';
import { logEvents, logRoles } from './logEvents.ts';
import { notificationEvents, notificationRoles } from './notificationEvents.ts';
import { outboxEvents, outboxRoles } from './outboxEvents.ts';
import { queueEvents, queueRoles } from './queueEvents.ts';
import type { EventRoles } from './roles.ts';
import { sessionEvents, sessionRoles } from './sessionEvents.ts';
import { tokenEvents, tokenRoles } from './tokenEvents.ts';

/** Every event type runledger writes. Adding one here makes the compiler list every fold that must learn it. */
export const eventDefinitions = {
  ...outboxEvents,
  ...queueEvents,
  ...executionEvents,
  ...boardEvents,
  ...edgeEvents,
  ...sessionEvents,
  ...hookEvents,
  ...notificationEvents,
  ...adoptionEvents,
  ...tokenEvents,
  ...logEvents,
};

/** What each type is to the summary, the subscriptions and the narration: each group's table (events/roles.ts). */
export const eventRoles = {
  ...outboxRoles,
  ...queueRoles,
  ...executionRoles,
  ...boardRoles,
  ...edgeRoles,
  ...sessionRoles,
  ...hookRoles,
  ...notificationRoles,
  ...adoptionRoles,
  ...tokenRoles,
  ...logRoles,
} satisfies Record<EventType, EventRoles>;

type Definitions = typeof eventDefinitions;
export type EventType = keyof Definitions & string;
export type EventData<T extends EventType> = z.output<Definitions[T]['schema']>;

/** The discriminated union of every event as read back from the log. */
export type DomainEvent = { [T in EventType]: StoredEvent<T, EventData<T>> }[EventType];
/** The same union, as a decider proposes it. */
export type NewDomainEvent = { [T in EventType]: NewEvent<T, EventData<T>> }[EventType];
/** The events of the types `T`, as read back from the log. */
export type EventOf<T extends EventType> = Extract<DomainEvent, { readonly type: T }>;
/** The same, as a decider proposes them. */
export type NewEventOf<T extends EventType> = Extract<NewDomainEvent, { readonly type: T }>;

/**
 * The catalog's groups, one per file above, so a fold can say at once that it reads no type of a
 * group (see `ignoreRest`). A group missing here cannot be ignored wholesale: every fold must name its types.
 */
interface EventGroups {
  outbox: typeof outboxEvents;
  queue: typeof queueEvents;
  execution: typeof executionEvents;
  board: typeof boardEvents;
  edge: typeof edgeEvents;
  session: typeof sessionEvents;
  hook: typeof hookEvents;
  notification: typeof notificationEvents;
  adoption: typeof adoptionEvents;
  token: typeof tokenEvents;
  log: typeof logEvents;
}
export type EventGroup = keyof EventGroups;
/** Every type of the groups `G`. */
export type TypesOf<G extends EventGroup> = { [K in G]: keyof EventGroups[K] & string }[G];
/** Every type of the other groups: what a fold that reads only the groups `G` ignores wholesale. */
export type TypesOutside<G extends EventGroup> = TypesOf<Exclude<EventGroup, G>>;

type Roles = typeof eventRoles;
/** Every type whose role `R` is one of `V` (`TypesWhere<'notice', null>`: what no subscription hears). */
export type TypesWhere<R extends keyof EventRoles, V extends EventRoles[R]> = {
  [T in EventType]: Roles[T][R] extends V ? T : never;
}[EventType];

export const codec = new EventCodec(eventDefinitions);
