import type { z } from 'zod';
import { boardEvents } from './boardEvents.ts';
import { EventCodec } from './codec.ts';
import type { NewEvent, StoredEvent } from './envelope.ts';
import { edgeEvents } from './edgeEvents.ts';
import { adoptionEvents } from './adoptionEvents.ts';
import { executionEvents } from './executionEvents.ts';
import { hookEvents } from './hookEvents.ts';
import { notificationEvents } from './notificationEvents.ts';
import { outboxEvents } from './outboxEvents.ts';
import { queueEvents } from './queueEvents.ts';
import { sessionEvents } from './sessionEvents.ts';

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
};

type Definitions = typeof eventDefinitions;
export type EventType = keyof Definitions & string;
export type EventData<T extends EventType> = z.output<Definitions[T]['schema']>;

/** The discriminated union of every event as read back from the log. */
export type DomainEvent = { [T in EventType]: StoredEvent<T, EventData<T>> }[EventType];
/** The same union, as a decider proposes it. */
export type NewDomainEvent = { [T in EventType]: NewEvent<T, EventData<T>> }[EventType];

export const codec = new EventCodec(eventDefinitions);
