import * as z from 'zod';
import { reasonWords, recordedReason } from './replayFields.ts';
import { SafeId } from './safeId.ts';

/**
 * Why a computer's queue decided what it did, as a code with the parameters a sentence is made of
 * (docs/replay-and-audit.md#reasons-as-codes), as the board's are (boardReasons.ts). The queue records
 * the code; the audit, the summary, the narration and the frame's answer to the board word it with
 * `wordQueueReason`. Logs of older versions hold sentences: they read as they were written. A code,
 * once in a log, is never renamed nor given another meaning.
 */

const id = SafeId;
const login = z.string().min(1).max(200);
const count = z.number().int().nonnegative();
/** Words the world gave (an unreadable frame, a start that failed, a claim's failure): said as given. */
const said = z.string().min(1);
/** A run's status in its queue, and how the queue last handled a run it no longer holds. */
const status = z.enum(['waiting', 'claiming', 'running']);
const handled = z.enum(['skipped', 'withdrawn', 'ended']);

/** The queue's reasons, by code: its answers to the board's frames first, then its decisions on runs. */
export const QueueReason = z.lazy(() =>
  z
    .discriminatedUnion('code', [
      // A frame's answer (`frame.acknowledged`).
      z.strictObject({ code: z.literal('unreadable'), problem: said }),
      z.strictObject({ code: z.literal('not.addressed'), computer: id }),
      z.strictObject({ code: z.literal('cancelled.unclaimed') }),
      z.strictObject({ code: z.literal('cancel.with.heartbeat') }),
      z.strictObject({ code: z.literal('not.queued') }),
      z.strictObject({ code: z.literal('claim.in.flight') }),
      z.strictObject({ code: z.literal('ignored.status'), run: id, status }),
      z.strictObject({ code: z.literal('ignored.unqueued'), run: id }),
      z.strictObject({ code: z.literal('ignored.unheld'), run: id }),
      z.strictObject({ code: z.literal('cancel.to.run') }),
      z.strictObject({ code: z.literal('cancel.with.claim') }),
      z.strictObject({ code: z.literal('cancel.to.limited') }),
      z.strictObject({ code: z.literal('unknown.kind'), kind: z.string().min(1).max(100) }),
      z.strictObject({ code: z.literal('resent.unparked') }),
      z.strictObject({ code: z.literal('resent.claiming') }),
      z.strictObject({ code: z.literal('already'), status }),
      z.strictObject({ code: z.literal('handled'), how: handled }),
      z.strictObject({ code: z.literal('draining') }),
      z.strictObject({ code: z.literal('no.lane') }),
      z.strictObject({ code: z.literal('queued') }),
      // Its answer to a frame and its decision on the run alike.
      z.strictObject({ code: z.literal('withdrawn.elsewhere') }),
      // The queue's decisions on its runs.
      z.strictObject({ code: z.literal('withdrawn.cancelled') }),
      z.strictObject({ code: z.literal('earlier.turn.open') }),
      z.strictObject({ code: z.literal('earlier.turn.ended') }),
      z.strictObject({ code: z.literal('start.failed'), problem: said }),
      z.strictObject({ code: z.literal('stale.busy') }),
      z.strictObject({ code: z.literal('finished') }),
      z.strictObject({ code: z.literal('failed'), error: said.optional() }),
      z.strictObject({ code: z.literal('claim.failed'), why: said, waitS: z.number().nonnegative() }),
      z.strictObject({ code: z.literal('busy.draining') }),
      z.strictObject({ code: z.literal('claimed.elsewhere') }),
      z.strictObject({ code: z.literal('gone'), status: count }),
      z.strictObject({ code: z.literal('failed.draining'), why: said }),
      z.strictObject({ code: z.literal('failed.often'), attempts: count, why: said }),
      z.strictObject({ code: z.literal('refused'), status: count, answer: z.string().min(1).max(200).optional() }),
      z.strictObject({ code: z.literal('claimed.at.limit'), login }),
      z.strictObject({ code: z.literal('limit.at.reset'), login }),
      z.strictObject({ code: z.literal('limit.joined'), login }),
      z.strictObject({ code: z.literal('limit.no.reset'), login, waitMin: z.number().nonnegative() }),
      z.strictObject({ code: z.literal('limit.lifted'), login }),
    ])
    .meta({
      id: 'QueueReason',
      description:
        "Why a computer's queue decided: a code and its parameters, worded by `wordQueueReason` (events/queueReasons.ts). Replay compares the code only.",
    }),
);
export type QueueReason = z.infer<typeof QueueReason>;

/** A queue decision's reason: a code (this version) or the sentence an older version recorded. */
export const queueReason = recordedReason(QueueReason);
export type RecordedQueueReason = string | QueueReason;

/** The sentence for a queue reason; a sentence an older version recorded is given back as it is. */
export const wordQueueReason = reasonWords(queueWords);

/** Why a run is parked: also what the board's page says of a run parked on a computer. */
export const WAITS_FOR_EARLIER_TURN = wordQueueReason({ code: 'earlier.turn.open' });

function queueWords(reason: QueueReason): string {
  switch (reason.code) {
    case 'unreadable':
      return reason.problem;
    case 'not.addressed':
      return `ignored: addressed to computer ${reason.computer}`;
    case 'cancelled.unclaimed':
      return 'cancelled before it was claimed';
    case 'cancel.with.heartbeat':
      return 'already claimed: its cancel comes with its heartbeat';
    case 'not.queued':
      return 'not queued here';
    case 'claim.in.flight':
      return "its claim is in flight: the board's answer settles it";
    case 'ignored.status':
      return `ignored: run ${reason.run} is ${reason.status} here`;
    case 'ignored.unqueued':
      return `ignored: run ${reason.run} is not queued here`;
    case 'ignored.unheld':
      return `ignored: run ${reason.run} is not held here`;
    case 'cancel.to.run':
      return 'held here: handed to its run, which stops it';
    case 'cancel.with.claim':
      return 'its claim is in flight: its heartbeat brings the cancel';
    case 'cancel.to.limited':
      return 'held here, waiting out its login’s usage limit: handed to its run, which ends it';
    case 'unknown.kind':
      return `ignored: unknown frame kind "${reason.kind}"`;
    case 'resent.unparked':
      return 'resent: the earlier turn ended';
    case 'resent.claiming':
      return 'resent while its claim is in flight: remembered';
    case 'already':
      return `already ${reason.status} here`;
    case 'handled':
      return `already handled here (${reason.how})`;
    case 'draining':
      return 'draining';
    case 'no.lane':
      return 'a run.requested frame needs a lane';
    case 'queued':
      return 'queued';
    default:
      return runWords(reason);
  }
}

function runWords(reason: QueueReason): string {
  switch (reason.code) {
    case 'withdrawn.elsewhere':
      return 'withdrawn: another computer claimed it';
    case 'withdrawn.cancelled':
      return 'withdrawn: cancelled on the board before it was claimed';
    case 'earlier.turn.open':
      return 'waits: an earlier turn of its conversation is still open';
    case 'earlier.turn.ended':
      return 'the board resent its frame: the earlier turn of its conversation ended';
    case 'start.failed':
      return `could not start (${reason.problem}): back in its old place`;
    case 'stale.busy':
      return 'the busy answer is stale: the board resent its frame while the claim was in flight';
    case 'finished':
      return 'finished';
    case 'failed':
      return `failed${reason.error ? `: ${reason.error}` : ''}`;
    case 'claim.failed':
      return `the claim failed (${reason.why}): tried again in ${reason.waitS} s`;
    case 'busy.draining':
      return 'skipped: its conversation is busy and this computer is draining';
    case 'claimed.elsewhere':
      return 'skipped: another computer has it';
    case 'gone':
      return `skipped: it is gone from the board (${reason.status})`;
    case 'failed.draining':
      return `skipped: the claim failed (${reason.why}) while draining`;
    case 'failed.often':
      return `skipped: the claim failed ${reason.attempts} times (last: ${reason.why})`;
    case 'refused':
      return `skipped: the claim was refused (${reason.status}${reason.answer ? `: ${reason.answer}` : ''})`;
    case 'claimed.at.limit':
      return `waits: claimed while login ${reason.login} is at its usage limit, held until it lifts`;
    case 'limit.at.reset':
      return `waits: login ${reason.login} reached its usage limit, until the reset its agent gave`;
    case 'limit.joined':
      return `waits: login ${reason.login} reached its usage limit, until the limit already reported lifts`;
    case 'limit.no.reset':
      return `waits: login ${reason.login} reached its usage limit, no reset time given: tried again in ${reason.waitMin} min`;
    case 'limit.lifted':
      return `login ${reason.login}'s usage limit lifted: it runs again, still claimed`;
    default:
      return reason.code;
  }
}
