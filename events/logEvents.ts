import { z } from 'zod';
import { defineEvent, eventGroup } from './define.ts';

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
export const logEvents = eventGroup(
  defineEvent('log.archived', z.strictObject({ ...segment, events: z.number().int().nonnegative(), retainDays: z.number().positive() })),
  defineEvent('log.archive.deleted', z.strictObject({ ...segment, afterDays: z.number().positive() })),
);
