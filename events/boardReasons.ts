import * as z from 'zod';
import { reasonWords, recordedReason } from './replayFields.ts';
import { FINISHED_STATES, RUN_STATES } from './runStates.ts';
import { SafeId } from './safeId.ts';

/**
 * Why the board decided what it did, as a code with the parameters a sentence is made of
 * (docs/replay-and-audit.md#reasons-as-codes). The board records the code; the audit, `show`, the web
 * page and the HTTP answers word it with `wordBoardReason`, so a sentence can change in one place and
 * an old log reads in today's words. Replay compares a code, never its parameters (see replayFields.ts).
 * Logs of older versions hold sentences: they read as they were written. A code, once in a log, is
 * never renamed nor given another meaning.
 */

const id = SafeId;
const ids = z.array(SafeId);
const count = z.number().int().nonnegative();
const finished = z.enum(FINISHED_STATES);

/** Who an offer went to, and why them (docs/rules.md#dispatch). */
export const OfferTarget = z.lazy(() =>
  z
    .discriminatedUnion('to', [
      z.strictObject({ to: z.literal('last.turn'), computer: id, lane: id }),
      z.strictObject({ to: z.literal('earlier.waits'), computers: ids, earlier: id }),
      z.strictObject({ to: z.literal('earlier.unplaced'), earlier: id }),
      z.strictObject({ to: z.literal('everyone'), count }),
      z.strictObject({ to: z.literal('nobody'), tried: z.boolean() }),
      z.strictObject({ to: z.literal('with.room'), computers: ids, backlog: count }),
      z.strictObject({ to: z.literal('fewest.waiting'), computer: id, waiting: count, backlog: count }),
      z.strictObject({ to: z.literal('all.full'), window: count }),
      z.strictObject({ to: z.literal('most.room'), computer: id, busy: count }),
      z.strictObject({ to: z.literal('where.it.waits'), computer: id }),
      z.strictObject({ to: z.literal('no.repo'), repo: id }),
    ])
    .meta({ id: 'OfferTarget', description: 'Who a board offer went to, and why them (events/boardReasons.ts).' }),
);
export type OfferTarget = z.infer<typeof OfferTarget>;

/** What an offer answers: a submission, a computer that connected, left or passed, a turn's end, a wait. */
export const OfferOccasion = z.lazy(() =>
  z
    .discriminatedUnion('on', [
      z.strictObject({ on: z.literal('submitted') }),
      z.strictObject({ on: z.literal('connected'), computer: id }),
      z.strictObject({ on: z.literal('left.last.turn'), computer: id, lane: id }),
      z.strictObject({ on: z.literal('disconnected'), computer: id }),
      z.strictObject({ on: z.literal('turn.ended'), run: id, how: z.enum(['ended', 'was reaped']) }),
      z.strictObject({ on: z.literal('declined'), computer: id, why: z.enum(['draining', 'refused', 'unanswered']) }),
      z.strictObject({ on: z.literal('stale'), waitedS: count }),
      z.strictObject({ on: z.literal('room.again'), computer: id, claimed: id }),
    ])
    .meta({ id: 'OfferOccasion', description: 'What a board offer answers (events/boardReasons.ts).' }),
);
export type OfferOccasion = z.infer<typeof OfferOccasion>;

/** The board's reasons, by code. Refusals use the code of their HTTP answer, or a finer one. */
export const BoardReason = z.lazy(() =>
  z
    .discriminatedUnion('code', [
      z.strictObject({ code: z.literal('registered') }),
      z.strictObject({ code: z.literal('connected'), pushed: count }),
      z.strictObject({ code: z.literal('stream.closed') }),
      z.strictObject({ code: z.literal('draining'), run: id }),
      z.strictObject({ code: z.literal('first.heartbeat') }),
      z.strictObject({ code: z.literal('claimed'), computer: id }),
      z.strictObject({ code: z.literal('claimed.again') }),
      z.strictObject({ code: z.literal('cancel.pending') }),
      z.strictObject({ code: z.literal('cancel.passed'), computer: id }),
      z.strictObject({ code: z.literal('cancelled.unclaimed'), offeredTo: ids }),
      z.strictObject({ code: z.literal('resubmitted'), key: z.string().min(1).max(255), run: id }),
      z.strictObject({ code: z.literal('reaped'), computer: id, lastHeartbeatAt: count, silentS: z.number().int() }),
      z.strictObject({ code: z.literal('completed'), state: finished, error: z.string().max(120).optional() }),
      z.strictObject({ code: z.literal('offered'), on: OfferOccasion, to: OfferTarget.optional() }),
      z.strictObject({ code: z.literal('waits'), to: OfferTarget }),
      z.strictObject({ code: z.literal('computer_exists'), computer: id }),
      z.strictObject({ code: z.literal('unknown_computer'), computer: id }),
      z.strictObject({
        code: z.literal('computer_connected_elsewhere'),
        computer: id,
        board: z.string().min(1).max(300).optional(),
        incarnation: id.optional(),
      }),
      z.strictObject({
        code: z.literal('idempotency_key_reused'),
        key: z.string().min(1).max(255),
        run: id,
        fields: z.array(z.string().min(1).max(20)),
      }),
      z.strictObject({ code: z.literal('run_exists'), run: id }),
      /** `known`: the repositories the board's computers have, as each last announced them. */
      z.strictObject({ code: z.literal('unknown_repo'), repo: id, known: ids }),
      z.strictObject({ code: z.literal('unknown_run'), run: id }),
      z.strictObject({ code: z.literal('gone'), run: id, state: z.enum(RUN_STATES), beforeClaim: z.boolean() }),
      z.strictObject({ code: z.literal('claimed_by_another_life'), run: id, computer: id, holder: id.nullable(), asker: id.nullable() }),
      z.strictObject({ code: z.literal('claimed_elsewhere'), run: id, holder: id }),
      z.strictObject({
        code: z.literal('conversation_busy'),
        lane: id,
        open: id,
        state: z.enum(RUN_STATES),
        holder: id.nullable(),
        earlier: z.boolean(),
      }),
      z.strictObject({ code: z.literal('already_terminal'), run: id, state: z.enum(RUN_STATES) }),
      z.strictObject({ code: z.literal('not_holder'), run: id, computer: id, holder: id.nullable() }),
    ])
    .meta({
      id: 'BoardReason',
      description:
        'Why the board decided: a code and its parameters, worded by `wordBoardReason` (events/boardReasons.ts). Replay compares the code only.',
    }),
);
export type BoardReason = z.infer<typeof BoardReason>;
export type BoardReasonOf<C extends BoardReason['code']> = Extract<BoardReason, { code: C }>;

/** A board decision's reason: a code (this version) or the sentence an older version recorded. */
export const boardReason = recordedReason(BoardReason);
export type RecordedBoardReason = string | BoardReason;

/** The sentence for a board reason; a sentence an older version recorded is given back as it is. */
export const wordBoardReason = reasonWords(boardWords);

function boardWords(reason: BoardReason): string {
  switch (reason.code) {
    case 'registered':
      return 'registered';
    case 'connected':
      return `connected to the push stream${reason.pushed === 0 ? '' : `: pushed ${reason.pushed} unclaimed run${reason.pushed === 1 ? '' : 's'}`}`;
    case 'stream.closed':
      return 'its push stream closed';
    case 'draining':
      return `declined run ${reason.run}: draining`;
    case 'first.heartbeat':
      return 'its first heartbeat came';
    case 'claimed':
      return `claimed by ${reason.computer}`;
    case 'claimed.again':
      return 'claimed again by its holder (its answer was lost): granted again';
    case 'cancel.pending':
      return 'a cancel is already pending';
    case 'cancel.passed':
      return `cancel requested: pushed to ${reason.computer}, and said again by its next heartbeat`;
    case 'cancelled.unclaimed':
      return reason.offeredTo.length
        ? `cancelled before it was claimed: announced to ${reason.offeredTo.join(', ')}`
        : 'cancelled before it was claimed or offered';
    case 'resubmitted':
      return `submitted again with idempotency key "${reason.key}": answered with run ${reason.run}`;
    case 'reaped':
      return `reaped: no heartbeat from ${reason.computer} since ${new Date(reason.lastHeartbeatAt).toISOString()} (${reason.silentS} s)`;
    case 'completed':
      if (reason.state === 'succeeded') return 'completed: succeeded';
      if (reason.state === 'cancelled') return 'completed: cancelled by its user';
      return `completed: ${reason.state}${reason.error ? ` (${reason.error})` : ''}`;
    case 'offered':
      return `${occasionWords(reason.on)}${reason.to ? `${reason.on.on === 'submitted' ? ' ' : '; '}${targetWords(reason.to)}` : ''}`;
    case 'waits':
      return `offered to nobody yet: ${targetWords(reason.to)}`;
    default:
      return refusalWords(reason);
  }
}

function refusalWords(reason: BoardReason): string {
  switch (reason.code) {
    case 'computer_exists':
      return `computer ${reason.computer} already exists`;
    case 'unknown_computer':
      return `no computer ${reason.computer} on this board`;
    case 'computer_connected_elsewhere':
      return `computer ${reason.computer} is connected to ${reason.board === undefined ? 'another board' : `board ${reason.board}`}${reason.incarnation === undefined ? '' : ` (incarnation ${reason.incarnation})`}`;
    case 'idempotency_key_reused':
      return `idempotency key "${reason.key}" was used for run ${reason.run} with another body (${reason.fields.join(', ')} differ${reason.fields.length === 1 ? 's' : ''})`;
    case 'run_exists':
      return `run ${reason.run} already exists`;
    case 'unknown_repo':
      return (
        `no computer of this board has repository ${reason.repo} ` +
        `(${reason.known.length ? `its computers have ${reason.known.join(', ')}` : 'its computers have none'}): ` +
        `start a computer with --repo ${reason.repo}=PATH${reason.known.length ? ', or submit with one of those' : ''}`
      );
    case 'unknown_run':
      return `no run ${reason.run} on this board`;
    case 'gone':
      return `run ${reason.run} ${reason.beforeClaim ? 'was cancelled before it was claimed' : `is ${reason.state}`}`;
    case 'claimed_by_another_life':
      return `run ${reason.run} is claimed by another incarnation of computer ${reason.computer} (${reason.holder ?? 'one that sent none'}, not ${reason.asker ?? 'a claim without one'})`;
    case 'claimed_elsewhere':
      return `run ${reason.run} is claimed by computer ${reason.holder}`;
    case 'conversation_busy':
      return `${reason.earlier ? 'an earlier' : 'another'} turn of lane ${reason.lane} (run ${reason.open}) is ${reason.state} by ${reason.holder}`;
    case 'already_terminal':
      return `run ${reason.run} is already ${reason.state}`;
    case 'not_holder':
      return `${reason.computer} does not hold run ${reason.run}: ${reason.holder === null ? 'nobody holds its claim' : `its claim is held by ${reason.holder}`}`;
    default:
      return reason.code;
  }
}

const DECLINED = { draining: 'is draining', refused: 'refused it', unanswered: 'did not answer its offer' } as const;

function occasionWords(on: OfferOccasion): string {
  switch (on.on) {
    case 'submitted':
      return 'submitted: offered';
    case 'connected':
      return `re-offered: computer ${on.computer} connected`;
    case 'left.last.turn':
      return `re-offered: computer ${on.computer}, which ran the last turn of lane ${on.lane}, disconnected`;
    case 'disconnected':
      return `re-offered: computer ${on.computer}, which had it, disconnected`;
    case 'turn.ended':
      return `resent: the turn it waited for (run ${on.run}) ${on.how}`;
    case 'declined':
      return `re-offered: ${on.computer} ${DECLINED[on.why]}`;
    case 'stale':
      return `re-offered: unclaimed for ${on.waitedS} s with its lane free`;
    case 'room.again':
      return `offered to ${on.computer}, which has room again (it claimed run ${on.claimed}): it waited for a computer with room`;
  }
}

function targetWords(to: OfferTarget): string {
  switch (to.to) {
    case 'last.turn':
      return `to ${to.computer}, which ran the last turn of lane ${to.lane}`;
    case 'earlier.waits':
      return `to ${to.computers.join(', ')}, where the lane's earlier run ${to.earlier} waits`;
    case 'earlier.unplaced':
      return `the lane's earlier run ${to.earlier} waits for a computer`;
    case 'everyone':
      return `to every connected computer (${to.count})`;
    case 'nobody':
      return to.tried ? 'every connected computer that takes work had it' : 'no connected computer takes work';
    case 'with.room':
      return `to the connected computers with fewer than ${to.backlog} runs waiting (${to.computers.join(', ')})`;
    case 'fewest.waiting':
      return `to ${to.computer}, which has the fewest runs waiting (${to.waiting}): every connected computer has ${to.backlog} or more`;
    case 'all.full':
      return `every connected computer has ${to.window} or more lanes waiting`;
    case 'most.room':
      return `to ${to.computer}, the computer with the most room (${to.busy} ${to.busy === 1 ? 'lane waiting or run held' : 'lanes waiting or runs held'} there)`;
    case 'where.it.waits':
      return `to ${to.computer}, where it waits`;
    case 'no.repo':
      return `no computer online has repository ${to.repo}`;
  }
}
