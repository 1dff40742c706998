import * as z from 'zod';
import { defineEvent, eventGroup } from './define.ts';
import { type GroupRoles, QUIET } from './roles.ts';
import { SafeId } from './safeId.ts';

/** The stream every submit token added is recorded in (docs/rules.md#postgresql-board): read whole by a board that meets a token it does not know. */
export const SUBMIT_TOKENS_STREAM = 'tokens:submit';

/**
 * Submit tokens made with `runledger token add NAME` (docs/rules.md#postgresql-board), on either store: only the token's hash
 * is recorded (SHA-256 of 256 random bits, as computer tokens are), never the token. A board takes a
 * submit token whose hash is recorded here, beside the token file of a SQLite board.
 */
export const tokenEvents = eventGroup(
  defineEvent('token.added', () => z.strictObject({ name: SafeId, tokenHash: z.string().regex(/^[0-9a-f]{64}$/) })),
  /** `runledger token revoke NAME`: every board refuses the token of that name from then on; the name stays taken. */
  defineEvent('token.revoked', () => z.strictObject({ name: SafeId })),
);

/** What each token event is to the summary, the subscriptions and the daemon's narration (see roles.ts). */
export const tokenRoles = {
  'token.added': QUIET,
  'token.revoked': QUIET,
} as const satisfies GroupRoles<typeof tokenEvents>;
