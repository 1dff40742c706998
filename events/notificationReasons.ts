import * as z from 'zod';
import { reasonWords, recordedReason } from './replayFields.ts';
import { SafeId } from './safeId.ts';

/**
 * Why a session's inbox files nothing, as a code with the parameters a sentence is made of
 * (docs/replay-and-audit.md#reasons-as-codes), as the board's are (boardReasons.ts). The inbox records
 * the code; the audit, the narration and a round's report (`runledger tick`) word it with
 * `wordNotificationReason`. Logs of older versions hold sentences: they read as they were written. A
 * code, once in a log, is never renamed nor given another meaning.
 */

const session = SafeId;
/** How many notices wait. */
const notices = z.number().int().positive();

export const NotificationReason = z.lazy(() =>
  z
    .discriminatedUnion('code', [
      // Its liveness could not be read (`inbox.waiting`): `detail`, what the reading said, when it said anything.
      z.strictObject({ code: z.literal('liveness.unreadable'), session, detail: z.string().max(500).nullable(), notices }),
      // The board does not record it live and it is not read running (`inbox.withheld`).
      z.strictObject({
        code: z.literal('not.running'),
        session,
        record: z.enum(['ended', 'unknown']),
        liveness: z.enum(['stopped', 'gone']),
        notices,
      }),
    ])
    .meta({
      id: 'NotificationReason',
      description:
        "Why a session's inbox files nothing: a code and its parameters, worded by `wordNotificationReason` (events/notificationReasons.ts). Replay compares the code only.",
    }),
);
export type NotificationReason = z.infer<typeof NotificationReason>;

/** An inbox decision's reason: a code (this version) or the sentence an older version recorded. */
export const notificationReason = recordedReason(NotificationReason);
export type RecordedNotificationReason = string | NotificationReason;

/** The sentence for an inbox's reason; a sentence an older version recorded is given back as it is. */
export const wordNotificationReason = reasonWords(notificationWords);

function notificationWords(reason: NotificationReason): string {
  const one = reason.notices === 1;
  const waiting = `${reason.notices} notice${one ? '' : 's'} wait${one ? 's' : ''}`;
  switch (reason.code) {
    case 'liveness.unreadable':
      return `the liveness of session ${reason.session} could not be read${reason.detail ? ` (${reason.detail})` : ''}: ${waiting} until it can be`;
    case 'not.running': {
      const known = reason.record === 'ended' ? 'the board recorded it ended' : 'the board never saw it run';
      return `session ${reason.session} is filed nothing: ${known}, and it reads ${reason.liveness}; ${waiting} until it runs again`;
    }
  }
}
