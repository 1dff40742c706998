import * as z from 'zod';
import { reasonWords, recordedReason } from './replayFields.ts';

/**
 * Why a claimed run's actor decided what it did, as a code with the parameters a sentence is made of
 * (docs/replay-and-audit.md#reasons-as-codes), as the board's are (boardReasons.ts). The run records
 * the code; the audit, the narration, its queue (which says why the run ended) and `runledger run`
 * word it with `wordExecutionReason`. Logs of older versions hold sentences: they read as they were
 * written. A code, once in a log, is never renamed nor given another meaning.
 */

/** An HTTP status the board answered; 0 for a network error. */
const status = z.number().int().min(0).max(599);
/** What a session was left at by a turn (actors/run/resume.ts, SessionMoment). */
const moment = z.enum(['announced', 'succeeded', 'failed', 'rejected', 'resume_refused', 'timed_out', 'cancelled', 'killed']);

export const ExecutionReason = z.lazy(() =>
  z
    .discriminatedUnion('code', [
      z.strictObject({ code: z.literal('held.at.limit') }),
      z.strictObject({ code: z.literal('cancel.asked') }),
      z.strictObject({ code: z.literal('cancel.pushed') }),
      z.strictObject({ code: z.literal('usage.limit') }),
      z.strictObject({ code: z.literal('resolved.elsewhere') }),
      z.strictObject({ code: z.literal('acknowledged') }),
      z.strictObject({ code: z.literal('already.terminal'), status }),
      z.strictObject({ code: z.literal('unacknowledged'), attempts: z.number().int().positive(), status }),
      z.strictObject({ code: z.literal('completion.failed'), status, waitS: z.number().nonnegative() }),
      z.strictObject({ code: z.literal('resolved') }),
      z.strictObject({ code: z.literal('resolved.before.start') }),
      z.strictObject({ code: z.literal('local'), ok: z.boolean(), error: z.string().optional() }),
      z.strictObject({ code: z.literal('reply.refused') }),
      z.strictObject({ code: z.literal('resume.refused') }),
      z.strictObject({ code: z.literal('announced.refusing') }),
      z.strictObject({ code: z.literal('turn.ended'), moment }),
    ])
    .meta({
      id: 'ExecutionReason',
      description:
        "Why a run's actor decided: a code and its parameters, worded by `wordExecutionReason` (events/executionReasons.ts). Replay compares the code only.",
    }),
);
export type ExecutionReason = z.infer<typeof ExecutionReason>;

/** A run's decision's reason: a code (this version) or the sentence an older version recorded. */
export const executionReason = recordedReason(ExecutionReason);
export type RecordedExecutionReason = string | ExecutionReason;

/** The sentence for a run's reason; a sentence an older version recorded is given back as it is. */
export const wordExecutionReason = reasonWords(executionWords);

const answered = (status: number) => (status === 0 ? 'network error' : String(status));

function executionWords(reason: ExecutionReason): string {
  switch (reason.code) {
    case 'held.at.limit':
      return 'claimed while its login is at its usage limit: held, heartbeated, until its queue gives it a slot';
    case 'cancel.asked':
      return 'the board asked for a cancel';
    case 'cancel.pushed':
      return 'the board pushed a cancel';
    case 'usage.limit':
      return 'the agent stopped at its login’s usage limit: back to the queue until it lifts';
    case 'resolved.elsewhere':
      return 'resolved on the board (reaped, or closed elsewhere): nothing will be posted';
    case 'acknowledged':
      return 'the board acknowledged its completion';
    case 'already.terminal':
      return `the board already holds it as terminal (${reason.status})`;
    case 'unacknowledged':
      return `the board did not acknowledge its completion after ${reason.attempts} attempts (last: ${answered(reason.status)}): unreported, it is reported again on redelivery`;
    case 'completion.failed':
      return `completion failed (${answered(reason.status)}): tried again in ${reason.waitS} s`;
    case 'resolved':
      return 'resolved on the board: nothing posted';
    case 'resolved.before.start':
      return 'resolved on the board before it started: nothing posted';
    case 'local':
      return `a local turn (runledger run), no board to report to: ${reason.ok ? 'succeeded' : `failed: ${reason.error ?? 'no reason given'}`}`;
    case 'reply.refused':
      return 'its reply was refused';
    case 'resume.refused':
      return 'the agent refused to resume it';
    case 'announced.refusing':
      return 'announced by the agent as it refused to resume';
    case 'turn.ended':
      return `its turn ${reason.moment}`;
  }
}
