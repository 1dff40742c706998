import { createHash } from 'node:crypto';
import { isSafeId } from '../../../events/idRule.ts';

/**
 * The id a session's stream is named by: its own id when that may name a stream, else a digest of it
 * (agents announce ids with dots and colons; stream ids are `^[A-Za-z0-9-]{1,64}$`). Every event still
 * carries the real id, which is what the audit finds.
 */
export function sessionKey(sessionId: string): string {
  return isSafeId(sessionId) ? sessionId : `h-${createHash('sha256').update(sessionId).digest('hex').slice(0, 40)}`;
}

export const sessionStream = (computer: string, key: string): string => `${computer}/session:${key}`;

/** The key standing in for the session of a launch no session id was ever read for. */
export const launchKey = (runId: string): string => sessionKey(`launch-${runId}`);
