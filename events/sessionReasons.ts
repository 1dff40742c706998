import * as z from 'zod';
import { reasonWords, recordedReason } from './replayFields.ts';
import { SafeId } from './safeId.ts';

/**
 * Why a session's close decided what it did, as a code with the parameters a sentence is made of
 * (docs/replay-and-audit.md#reasons-as-codes), as the board's are (boardReasons.ts). The close records
 * the code; the audit, the summary's tally, the narration, `runledger tick` and the board page word it
 * with `wordSessionReason`. Logs of older versions hold sentences: they read as they were written. A
 * code, once in a log, is never renamed nor given another meaning.
 */

const ms = z.number().int().nonnegative();
const attempt = z.number().int().positive();
/** What the reading saw, in the driver's words (the activity's `seen`), when it said anything. */
const seen = z.string().min(1).max(500).optional();
/** A close that stops the session: said as the kill's reason, or, with nothing left to stop, as its close's. */
const nothingLeft = z.literal(true).optional();
/** What a kill's answer said. */
const detail = z.string().max(1000);

export const SessionReason = z.lazy(() =>
  z
    .discriminatedUnion('code', [
      // Its close is intended (`session.close.intended`): a run in it ended.
      z.strictObject({ code: z.literal('intended'), run: SafeId, lane: SafeId.nullable(), bound: z.boolean() }),
      z.strictObject({ code: z.literal('stands'), run: SafeId, lane: SafeId.nullable(), bound: z.boolean() }),
      // Its close is claimed (`session.close.claimed`); `unanswered`: a kill of that attempt was never answered.
      z.strictObject({ code: z.literal('claimed'), unanswered: attempt.optional() }),
      z.strictObject({ code: z.literal('renewed'), unanswered: attempt.optional() }),
      z.strictObject({ code: z.literal('taken.over'), from: z.string().min(1).max(300), expired: z.boolean(), unanswered: attempt.optional() }),
      // It waits (`session.close.deferred`).
      z.strictObject({ code: z.literal('unreadable'), failure: z.string().min(1).max(1000).nullable() }),
      z.strictObject({ code: z.literal('in.turn'), turn: z.string().min(1).max(40), seen }),
      z.strictObject({ code: z.literal('no.write'), seen }),
      z.strictObject({ code: z.literal('watching'), quietMs: ms, watchedMs: ms, restarted: z.enum(['written', 'stale']).optional(), seen }),
      // It is stopped (`session.kill.requested`, or `session.closed` with nothing left to stop).
      z.strictObject({ code: z.literal('no.agent'), seen, nothingLeft }),
      z.strictObject({ code: z.literal('idle'), seen, nothingLeft }),
      z.strictObject({ code: z.literal('unbound'), windowMs: ms, seen, nothingLeft }),
      z.strictObject({ code: z.literal('quiet'), watchedMs: ms, quietMs: ms, seen, nothingLeft }),
      // It is closed (`session.closed`), or fails for good (`session.close.incident`).
      z.strictObject({ code: z.literal('gone'), seen }),
      z.strictObject({ code: z.literal('stopped'), detail }),
      z.strictObject({ code: z.literal('unstoppable'), detail }),
    ])
    .meta({
      id: 'SessionReason',
      description:
        "Why a session's close decided: a code and its parameters, worded by `wordSessionReason` (events/sessionReasons.ts). Replay compares the code only.",
    }),
);
export type SessionReason = z.infer<typeof SessionReason>;
export type SessionStop = Extract<SessionReason, { code: 'no.agent' | 'idle' | 'unbound' | 'quiet' }>;

/** A session close's reason: a code (this version) or the sentence an older version recorded. */
export const sessionReason = recordedReason(SessionReason);
export type RecordedSessionReason = string | SessionReason;

/** The sentence for a session close's reason; a sentence an older version recorded is given back as it is. */
export const wordSessionReason = reasonWords(sessionWords);

/** `120 s`, `1.5 s`: the settings are whole seconds in use, tenths in tests. */
export function secs(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

const KEPT = 'its id is kept for a later turn to resume';
const RESTARTED = {
  written: ' (its record was written: the watch starts again)',
  stale: ' (the last reading was too long ago: the watch starts again)',
};

function sessionWords(reason: SessionReason): string {
  const saw = 'seen' in reason && reason.seen ? ` (${reason.seen})` : '';
  switch (reason.code) {
    case 'intended':
    case 'stands': {
      const how = reason.bound
        ? `run ${reason.run}${reason.lane ? ` of lane ${reason.lane}` : ''} ended`
        : `run ${reason.run} ended, and no session was ever read for its launch`;
      return `${how}: ${reason.code === 'stands' ? 'the close already asked for stands' : 'its session is to be closed between turns'}`;
    }
    case 'claimed':
    case 'renewed':
    case 'taken.over': {
      const claimed =
        reason.code === 'claimed'
          ? 'claimed before anything outside the log is touched'
          : reason.code === 'renewed'
            ? 'its own claim renewed: less than a minute of it was left'
            : `claimed over ${reason.from}'s, which no longer holds (${reason.expired ? 'expired' : 'its process is gone'})`;
      return reason.unanswered === undefined
        ? claimed
        : `${claimed}; the kill of attempt ${reason.unanswered} was never answered, so it is read again`;
    }
    case 'unreadable':
      return `its session could not be read just now (${reason.failure ?? 'no reading'}); it is read again next round`;
    case 'in.turn':
      return `its session is in a turn (${reason.turn})${saw}; it closes once the turn ends`;
    case 'no.write':
      return `its session publishes no turn${saw}, and its record shows no write to count from: it waits`;
    case 'watching':
      return `its session publishes no turn${saw}; it closes once it is read idle, or after ${secs(reason.quietMs)} watched with nothing written to its record (${secs(reason.watchedMs)} so far)${reason.restarted ? RESTARTED[reason.restarted] : ''}`;
    case 'gone':
      return `nothing of it runs any more${saw}; ${KEPT}`;
    case 'stopped':
      return `stopped (${reason.detail}); ${KEPT}`;
    case 'unstoppable':
      return `it could not be stopped and will not be tried again: ${reason.detail}`;
    default:
      return `${stopWords(reason, saw)}${reason.nothingLeft ? '; nothing was left to stop' : ''}`;
  }
}

function stopWords(reason: SessionStop, saw: string): string {
  switch (reason.code) {
    case 'no.agent':
      return `no agent runs in it${saw}`;
    case 'idle':
      return `read idle, between turns${saw}`;
    case 'unbound':
      return `a launch never bound to a session, past its launch window of ${secs(reason.windowMs)}${saw}`;
    case 'quiet':
      return `its session publishes no turn${saw}, and nothing was written to its record in ${secs(reason.watchedMs)} watched (quiet ${secs(reason.quietMs)})`;
  }
}
