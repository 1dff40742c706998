import * as z from 'zod';
import { defineEvent, eventGroup } from './define.ts';
import type { GroupRoles } from './roles.ts';

/**
 * Requests the server refused at its edge, before any decider saw them (a wrong token, a body that is
 * not JSON, an id that could escape a folder): recorded in `board:<id>` so the audit shows them.
 * Nothing about the caller's secret is kept.
 */
export const edgeEvents = eventGroup(
  defineEvent('board.request.rejected', () =>
    z.strictObject({
      method: z.string().max(16),
      path: z.string().max(300),
      status: z.number().int().min(400).max(599),
      code: z.string().min(1).max(100),
      reason: z.string().min(1).max(500),
    }),
  ),
  /**
   * Requests refused before their caller proved a token, counted instead of recorded one by one, so
   * that nobody without a token makes the log grow by more than one event a minute (docs/rules.md#the-log).
   * `reasons`: how many of each code; `first_at`, `last_at`: the window's first and last refusal.
   */
  defineEvent('board.requests.refused', () =>
    z.strictObject({
      count: z.number().int().positive(),
      reasons: z.record(z.string().min(1).max(100), z.number().int().positive()),
      first_at: z.number().int().nonnegative(),
      last_at: z.number().int().nonnegative(),
    }),
  ),
);

/** What each edge event is to the summary, the subscriptions and the daemon's narration (see roles.ts). */
export const edgeRoles = {
  'board.request.rejected': { summary: 'none', notice: null, told: true },
  'board.requests.refused': { summary: 'none', notice: null, told: true },
} as const satisfies GroupRoles<typeof edgeEvents>;
