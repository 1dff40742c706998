import * as z from 'zod';
import { defineEvent, eventGroup } from './define.ts';
import { type GroupRoles, QUIET } from './roles.ts';

const seq = z.number().int().positive();

/**
 * The outbox's own bookkeeping, in stream `outbox:<consumer>`. Taking effects moves the consumer's
 * cursor in the same append, so two processes can never take one effect: the loser's append is stale.
 */
export const outboxEvents = eventGroup(
  defineEvent('outbox.taken', () =>
    z.strictObject({
      through: z.number().int().nonnegative(),
      effects: z.array(seq),
      /**
       * On a log of several boards (docs/rules.md#postgresql-board): the epoch of the chores' lease the take was made under, which
       * its effects are started and settled under; absent on a log of one board, and in older logs.
       */
      epoch: z.number().int().positive().optional(),
    }),
  ),
  defineEvent('outbox.performed', () => z.strictObject({ effect: seq, ok: z.boolean(), detail: z.string().optional() })),
  /** Taken by a process that died before it finished: an at-most-once effect is never run again. */
  defineEvent('outbox.interrupted', () => z.strictObject({ effect: seq, detail: z.string() })),
);

/** What each outbox event is to the summary, the subscriptions and the daemon's narration (see roles.ts). */
export const outboxRoles = {
  'outbox.taken': QUIET,
  'outbox.performed': QUIET,
  'outbox.interrupted': QUIET,
} as const satisfies GroupRoles<typeof outboxEvents>;
