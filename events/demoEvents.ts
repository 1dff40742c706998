import { z } from 'zod';
import { defineEvent, eventGroup } from './define.ts';

/**
 * A small counter stream (`counter:<id>`) that exercises the log machinery end to end (inputs,
 * decisions, an effect, an upcast) until the run and lane actors land. Bumps past the limit are refused.
 */
export const demoEvents = eventGroup(
  defineEvent(
    'counter.bump.requested',
    z.strictObject({ by: z.number().int().positive(), limit: z.number().int().positive() }),
    // Before the limit travelled with the request, every counter stopped at 100.
    [{ schema: z.strictObject({ by: z.number().int().positive() }), upcast: (old: { by: number }) => ({ ...old, limit: 100 }) }],
  ),
  defineEvent('counter.bumped', z.strictObject({ total: z.number().int() })),
  defineEvent('counter.bump.refused', z.strictObject({ total: z.number().int(), reason: z.string() })),
  defineEvent('counter.milestone.reached', z.strictObject({ total: z.number().int() })),
);
