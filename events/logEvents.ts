import * as z from 'zod';
import { defineEvent, eventGroup } from './define.ts';
import { type GroupRoles, QUIET } from './roles.ts';

/** The stream the log's own bookkeeping is recorded in: which segments left it, and which were deleted. */
export const LOG_ARCHIVE_STREAM = 'log:archive';

const segment = {
  from: z.number().int().positive(),
  to: z.number().int().positive(),
  /** The segment's file name inside the `archive/` folder beside the log. */
  file: z.string().min(1).max(300),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
};

/**
 * Retention (docs/retention.md): the rows `from..to` were sealed, durably, in the segment `file` before
 * they left the live log; a segment is deleted only by an explicit setting, recorded before the unlink.
 */
/** A segment recorded before, carried by each later `log.archived`, so the newest one, always live, says them all. */
const earlierSegment = z.strictObject({
  from: segment.from,
  to: segment.to,
  file: segment.file,
  archivedAt: z.number(),
  deleted: z.strictObject({ at: z.number(), afterDays: z.number().positive() }).nullable(),
});

export const logEvents = eventGroup(
  defineEvent('log.archived', () =>
    z.strictObject({
      ...segment,
      events: z.number().int().nonnegative(),
      retainDays: z.number().positive(),
      /**
       * Every segment recorded before this one, with its deletion: their own records leave the live log
       * with later cuts (and go with a deleted segment), this one is live until the next cut records again.
       */
      earlier: z.array(earlierSegment).max(1_000_000).optional(),
    }),
  ),
  defineEvent('log.archive.deleted', () => z.strictObject({ ...segment, afterDays: z.number().positive() })),
);

/** What each log event is to the summary, the subscriptions and the daemon's narration (see roles.ts). */
export const logRoles = {
  'log.archived': QUIET,
  'log.archive.deleted': QUIET,
} as const satisfies GroupRoles<typeof logEvents>;
