import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { AdoptionReason } from '../../events/adoptionReasons.ts';
import { BoardReason, OfferOccasion, OfferTarget } from '../../events/boardReasons.ts';
import { eventDefinitions } from '../../events/catalog.ts';
import { defineEvent } from '../../events/define.ts';
import { ExecutionReason } from '../../events/executionReasons.ts';
import { NotificationReason } from '../../events/notificationReasons.ts';
import { QueueReason } from '../../events/queueReasons.ts';
import { SessionReason } from '../../events/sessionReasons.ts';

// Every command that opens a log loads the catalog; building all its schemas cost each start ~80 ms
// of CPU where it meets a few types. These pin that the catalog stays built on demand.
describe('the catalog builds a schema when it is first used, not when it is loaded', () => {
  it("an event type's schema is built on its first read, and once", () => {
    let builds = 0;
    const definition = defineEvent('test.built', () => {
      builds++;
      return z.strictObject({ n: z.number() });
    });
    expect(builds).toBe(0);
    expect(definition.schema.parse({ n: 1 })).toEqual({ n: 1 });
    expect(definition.schema).toBe(definition.schema);
    expect(builds).toBe(1);
  });

  it('every type of the catalog is defined so: its schema is a getter, not a value built with the catalog', () => {
    const eager = Object.entries(eventDefinitions)
      .filter(([, definition]) => Object.getOwnPropertyDescriptor(definition, 'schema')?.get === undefined)
      .map(([type]) => type);
    expect(eager).toEqual([]);
  });

  it("each group's reason codes are a z.lazy, whose union is built on the first reason checked", () => {
    const reasons = { AdoptionReason, BoardReason, OfferOccasion, OfferTarget, ExecutionReason, NotificationReason, QueueReason, SessionReason };
    for (const [name, schema] of Object.entries(reasons)) expect(schema, name).toBeInstanceOf(z.ZodLazy);
    expect(QueueReason.safeParse({ code: 'no.such.code' }).success).toBe(false);
  });
});
