import * as z from 'zod';
import { reasonWords, recordedReason } from './replayFields.ts';
import { SafeId } from './safeId.ts';

/**
 * Why a lane's adoption decided what it did, as a code with the parameters a sentence is made of
 * (docs/replay-and-audit.md#reasons-as-codes), as the board's are (boardReasons.ts). The adoption
 * records the code; the audit and a round's report (`runledger tick`) word it with
 * `wordAdoptionReason`. Logs of older versions hold sentences: they read as they were written. A code,
 * once in a log, is never renamed nor given another meaning.
 */

/** `host:pid` of the process holding a claim. */
const lock = z.string().min(3).max(300);
/** Why the listing could not be read, in its words; null when it was read and did not list the session. */
const listingError = z.string().max(500).nullable();

export const AdoptionReason = z.lazy(() =>
  z
    .discriminatedUnion('code', [
      // Its request is claimed (`adoption.claimed`); `lapsed`: over the claim of that lock, which no longer held.
      z.strictObject({ code: z.literal('claimed'), lock, session: SafeId, listedOn: SafeId, lapsed: lock.optional() }),
      // Its session is not listed (or the listing could not be read): it waits (`adoption.waiting`)…
      z.strictObject({ code: z.literal('not.listed'), session: SafeId, error: listingError, windowS: z.number().nonnegative() }),
      // …until the listing window closes, and it fails (`adoption.failed`).
      z.strictObject({ code: z.literal('window.closed'), session: SafeId, error: listingError, afterS: z.number().int().nonnegative() }),
      // The bind is over (`adoption.adopted`, or `adoption.failed` with the bind's error).
      z.strictObject({ code: z.literal('adopted'), lane: SafeId, session: SafeId, computer: SafeId }),
      z.strictObject({ code: z.literal('bind.failed'), error: z.string().max(500).nullable() }),
    ])
    .meta({
      id: 'AdoptionReason',
      description:
        "Why a lane's adoption decided: a code and its parameters, worded by `wordAdoptionReason` (events/adoptionReasons.ts). Replay compares the code only.",
    }),
);
export type AdoptionReason = z.infer<typeof AdoptionReason>;

/** An adoption decision's reason: a code (this version) or the sentence an older version recorded. */
export const adoptionReason = recordedReason(AdoptionReason);
export type RecordedAdoptionReason = string | AdoptionReason;

/** The sentence for an adoption's reason; a sentence an older version recorded is given back as it is. */
export const wordAdoptionReason = reasonWords(adoptionWords);

function adoptionWords(reason: AdoptionReason): string {
  switch (reason.code) {
    case 'claimed':
      return `claimed by ${reason.lock} to bind session ${reason.session} (listed on ${reason.listedOn})${reason.lapsed === undefined ? '' : `, after the claim of ${reason.lapsed} lapsed`}`;
    case 'not.listed':
      return `${unlisted(reason.session, reason.error)}: it waits up to ${reason.windowS} s from the request`;
    case 'window.closed':
      return `${unlisted(reason.session, reason.error)}, ${reason.afterS} s after the request`;
    case 'adopted':
      return `lane ${reason.lane}'s next turns run in session ${reason.session} on ${reason.computer}`;
    case 'bind.failed':
      return `the bind failed: ${reason.error ?? 'no reason given'}`;
  }
}

function unlisted(session: string, error: string | null): string {
  return error === null ? `session ${session} is not listed on any computer` : `the session listing could not be read (${error})`;
}
