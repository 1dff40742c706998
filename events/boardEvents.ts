import * as z from 'zod';
import { boardReason } from './boardReasons.ts';
import { MAX_TIMEOUT_S } from './bounds.ts';
import { defineEvent, eventGroup } from './define.ts';
import { type GroupRoles, QUIET } from './roles.ts';
import { RUN_STATES } from './runStates.ts';
import { SafeId } from './safeId.ts';
import { Usage } from './usage.ts';
import { BaseRef, ChangeSummary, RepoAnnouncement, RepoName } from './workspace.ts';

const runId = SafeId;
const computerId = SafeId;
/** A decision's why: a code the audit words (boardReasons.ts), or an older version's sentence. */
const reason = boardReason;
/** Prompts, replies and errors are bounded so one request cannot bloat the log; the computer cuts replies at 1 MiB. */
export const MAX_TEXT_CHARS = 4 * 1024 * 1024;
const text = z.string().max(MAX_TEXT_CHARS);
const at = z.number().int().nonnegative();
const idempotencyKey = z.string().min(1).max(255);
/** The board a push stream is held by (its log writer, `host:pid`): several boards share a log (docs/rules.md#postgresql-board). Absent from older versions. */
const board = z.string().min(1).max(300);
/** One life of a computer's daemon, drawn at its start (docs/rules.md#wire-and-cli). */
const incarnation = SafeId;
/**
 * Present on an input decided under one offer at a time (docs/rules.md#dispatch): a run is offered to
 * one computer, then to the next when that one refuses, drains or does not answer, and a claim that
 * lost (to another computer, to the run's end) is answered without being recorded. Older inputs lack
 * it and are re-derived as they were decided: offered to every computer with room, every claim recorded.
 */
const oneOffer = z.literal(true).optional();
/** A run's budget as the wire carries it (`timeout_s`): checked at every edge that reads one. */
export const TimeoutSeconds = z.number().int().min(0).max(MAX_TIMEOUT_S);

/** A run as submitted: what the submission carries and what queuing it records. */
const submission = {
  runId,
  lane: SafeId,
  prompt: text,
  agentId: SafeId.nullable(),
  /** The run's budget in seconds; 0 = no local limit, null = the computer's default. */
  timeoutS: z.number().nonnegative().finite().nullable(),
  idempotencyKey: idempotencyKey.optional(),
  /**
   * The repository the run works in, by the name its computers give it (`--repo NAME=PATH`), and the
   * ref its lane's new branch starts from. Which repositories a computer has is the computer's to say:
   * it announces them when it connects, and the board offers the run only to a computer that has it and
   * refuses a name none of its computers announced (docs/rules.md#workspaces). A computer that gets it
   * all the same (an older board, a restart that dropped it) fails the run, naming it.
   */
  repo: RepoName.optional(),
  base: BaseRef.optional(),
};

/** The exact completion error of a run its user cancelled (docs/rules.md#computer-behaviour). */
export const CANCELLED_BY_USER = 'cancelled_by_user';

/** Where a run stands on the board: the `state` of `GET /v1/runs/{run_id}` (docs/rules.md#wire-and-cli). */
export const RunStateSchema = z.enum(RUN_STATES);
export const FinishedStateSchema = z.enum(['succeeded', 'failed', 'cancelled']);

/** Which request a refusal or a repeated answer speaks of: the server maps each to its HTTP call. */
/**
 * What the board's host read of a run before it recorded a request about it (issue 16): settled runs
 * leave the board's state, so a request about one carries what the log says of it, for the decision
 * (and its replay) to be a function of the input. `live`: the state held it when the host looked;
 * null: the log has no such run; else the run's end. Absent in requests recorded by older versions.
 */
export const RunPastSchema = z.union([
  z.literal('live'),
  z.null(),
  z.strictObject({ state: z.enum(['succeeded', 'failed', 'cancelled', 'resolved']), computerId: computerId.nullable() }),
]);

export const BoardRequestSchema = z.enum(['submit', 'claim', 'cancel', 'reply', 'complete', 'computer.add', 'connect']);

/**
 * The board (docs/rules.md#the-log and docs/rules.md#wire-and-cli): inputs are requests the server took in and what the lease monitor
 * saw, recorded before anything is decided from them; decisions carry what the server answers and
 * what it pushes. Streams: `run:<id>` for a run's own events, `computer:<id>` for a computer's.
 * Run tokens and computer tokens never enter the log: a run token is derived outside from a board
 * secret, and a computer's token is hashed before it is recorded.
 */
export const boardEvents = eventGroup(
  // Inputs.
  /** Its runId is drawn outside (random) and recorded here, so a replay draws nothing. */
  /**
   * `bodyChecked`: a reused Idempotency-Key is checked against the first body (another body is refused
   * 422). Inputs of older versions lack it, and a reuse of theirs is replayed as taken: deduplicated.
   */
  defineEvent('board.run.submitted', () => z.strictObject({ ...submission, bodyChecked: z.literal(true).optional(), oneOffer })),
  defineEvent('board.computer.added', () => z.strictObject({ computerId, tokenHash: z.string().min(1).max(200) })),
  /**
   * `pushedFromState`: its frames are read from the board's state, not recorded run by run. Inputs of
   * older versions lack it, and their recorded per-run offers are re-derived as they were taken.
   */
  /**
   * `incarnation`: the life of the daemon on the stream (null: an older computer sent none). Its presence
   * marks an input decided under one push stream per computer across boards: a computer whose stream
   * another board holds is refused, unless it is the same life moving, or `over` names that board as one
   * the receiving board found holding no live stream (dead or stopped: its hold lapsed). Older inputs lack both.
   * `repos`: the repositories the computer has, as it announced them on the stream (docs/rules.md#workspaces);
   * absent from older computers and logs, whose computers are offered any run as before.
   */
  defineEvent('board.computer.connected', () =>
    z.strictObject({
      computerId,
      pushedFromState: z.literal(true).optional(),
      board: board.optional(),
      incarnation: incarnation.nullable().optional(),
      over: board.optional(),
      oneOffer,
      repos: RepoAnnouncement.optional(),
    }),
  ),
  /**
   * `lastSeenAt`: the last sign of life on its stream (a pong, an ack) when the board knew it. `board`: the
   * board whose stream closed; a close of a stream the computer has since opened on another board changes nothing.
   */
  defineEvent('board.computer.disconnected', () => z.strictObject({ computerId, lastSeenAt: at.optional(), board: board.optional(), oneOffer })),
  /**
   * `incarnation`: the claiming daemon's life (header `Runledger-Incarnation`); absent from older computers.
   * `bound`: decided under the rule that a claim without an incarnation is a life of its own (it never gets
   * a run another life holds) and that the run token is bound to the claiming life; older inputs lack it.
   */
  defineEvent('board.claim.requested', () =>
    z.strictObject({
      runId,
      computerId,
      incarnation: incarnation.optional(),
      past: RunPastSchema.optional(),
      bound: z.literal(true).optional(),
      oneOffer,
    }),
  ),
  /**
   * A `run.requested` frame acked 503 `draining` (the computer takes no new work in this life,
   * docs/rules.md#computer-behaviour), acked 200 or 400 (`refused`), or left without an ack for
   * OFFER_ACK_MS (`unanswered`): the run is offered to another computer (docs/rules.md#dispatch).
   */
  defineEvent('board.offer.declined', () => z.strictObject({ runId, computerId, reason: z.enum(['draining', 'refused', 'unanswered']), oneOffer })),
  /** From the lease monitor (in memory): heartbeats themselves are not recorded, only their absence. */
  defineEvent('board.heartbeat.lapsed', () => z.strictObject({ runId, lastHeartbeatAt: at, oneOffer })),
  /**
   * From the offer monitor (in memory): the run stayed unclaimed with its lane free since
   * `unclaimedSince`. Its computers may have skipped it (their claims failed) while their streams stayed
   * up, so no reconnect pushes it again: it is offered again. Recorded only when it is.
   */
  defineEvent('board.offer.stale', () => z.strictObject({ runId, unclaimedSince: at, oneOffer })),
  /** `pushed`: the board pushes the cancel to the holder's stream; older boards left it to the next heartbeat (a fact of the host, not read by the decider). */
  defineEvent('board.cancel.requested', () => z.strictObject({ runId, pushed: z.literal(true).optional(), past: RunPastSchema.optional() })),
  /** The first heartbeat (or reply) of a claimed run: it is running. */
  defineEvent('board.run.started', () => z.strictObject({ runId, computerId })),
  defineEvent('board.reply.received', () => z.strictObject({ runId, computerId, text, past: RunPastSchema.optional() })),
  /** `usage`: what the turn cost as its computer sent it (docs/rules.md#wire-and-cli); older computers and logs send none. */
  defineEvent('board.completion.received', () =>
    z.strictObject({
      runId,
      computerId,
      ok: z.boolean(),
      error: text.optional(),
      usage: Usage.optional(),
      past: RunPastSchema.optional(),
      /** What the turn changed in its worktree, as its computer sent it (absent: a plain folder, older computers). */
      changes: ChangeSummary.optional(),
      oneOffer,
    }),
  ),

  // Decisions.
  defineEvent('board.run.queued', () =>
    z.strictObject({
      ...submission,
      /** Submission order on this board: "earlier" in a lane means a smaller one. */
      submittedOrder: z.number().int().nonnegative(),
      /** Why it was offered to nobody yet (absent: it was offered, or an older version decided it). */
      waits: reason.optional(),
    }),
  ),
  /** A submission whose idempotency key was seen before: no new run, the answer names the old one. */
  defineEvent('board.run.deduplicated', () => z.strictObject({ runId, drawnRunId: runId, idempotencyKey, reason })),
  /** A `run.requested` frame to push to each of `computers`. */
  defineEvent('board.run.offered', () =>
    z.strictObject({ runId, lane: SafeId, agentId: SafeId.nullable(), computers: z.array(computerId).min(1), reason }),
  ),
  /** `bound`: its run token is bound to `incarnation` (none: to a claim without one); absent, the token is the computer's (older claims). */
  defineEvent('board.run.claimed', () =>
    z.strictObject({ runId, computerId, incarnation: incarnation.optional(), reason, bound: z.literal(true).optional() }),
  ),
  defineEvent('board.run.running', () => z.strictObject({ runId, computerId, reason })),
  /** A claimed run's cancel: pushed to its holder as `run.cancel_requested`; its heartbeat answer is the fallback. */
  defineEvent('board.run.cancel.requested', () => z.strictObject({ runId, computerId, reason })),
  /** An unclaimed run cancelled at once: a `run.cancelled` frame to push to each of `offeredTo`. */
  defineEvent('board.run.cancelled', () => z.strictObject({ runId, offeredTo: z.array(computerId), reason })),
  defineEvent('board.run.replied', () => z.strictObject({ runId, computerId, text })),
  /** `usage`, `changes`: the completion's, kept with the run (absent when it sent none). */
  defineEvent('board.run.finished', () =>
    z.strictObject({
      runId,
      computerId,
      state: FinishedStateSchema,
      error: text.optional(),
      reason,
      usage: Usage.optional(),
      changes: ChangeSummary.optional(),
    }),
  ),
  /** Reaped: the holder's heartbeats stopped for longer than the lease. */
  defineEvent('board.run.resolved', () => z.strictObject({ runId, computerId, lastHeartbeatAt: at, reason })),
  defineEvent('board.computer.registered', () => z.strictObject({ computerId, tokenHash: z.string().min(1).max(200), reason })),
  /**
   * `board`: the board that holds its stream (absent from older versions, and from one board alone at its
   * start). `incarnation`: the daemon's life on that stream (absent: an older computer or version).
   */
  /**
   * `oneOffer`: the runs it is pushed are chosen one offer at a time (docs/rules.md#dispatch); absent from older versions.
   * `repos`: the repositories it announced (docs/rules.md#workspaces), from its connect; absent when it made no announcement (an older computer).
   */
  defineEvent('board.computer.online', () =>
    z.strictObject({
      computerId,
      reason,
      board: board.optional(),
      incarnation: incarnation.optional(),
      oneOffer,
      repos: RepoAnnouncement.optional(),
    }),
  ),
  defineEvent('board.computer.offline', () => z.strictObject({ computerId, lastSeenAt: at.optional(), reason })),
  /** It declined a frame because it drains: offered nothing more until it connects again. */
  defineEvent('board.computer.draining', () => z.strictObject({ computerId, reason })),
  /** Every refusal is a decision too, so the audit shows it; `status` and `code` are the HTTP answer. */
  defineEvent('board.request.refused', () =>
    z.strictObject({
      request: BoardRequestSchema,
      runId: runId.optional(),
      computerId: computerId.optional(),
      status: z.union([z.literal(404), z.literal(409), z.literal(410), z.literal(422)]),
      code: z.string().min(1).max(100),
      reason,
    }),
  ),
  /** A request that was already granted (a claim whose answer was lost, a second cancel): answered again, nothing changes. */
  defineEvent('board.request.repeated', () =>
    z.strictObject({
      request: BoardRequestSchema,
      runId,
      computerId: computerId.optional(),
      status: z.union([z.literal(200), z.literal(202)]),
      reason,
    }),
  ),
);

/** What each board event is to the summary, the subscriptions and the daemon's narration (see roles.ts). */
export const boardRoles = {
  'board.run.submitted': QUIET,
  'board.computer.added': QUIET,
  'board.computer.connected': QUIET,
  'board.computer.disconnected': QUIET,
  'board.claim.requested': QUIET,
  'board.offer.declined': QUIET,
  'board.heartbeat.lapsed': QUIET,
  'board.offer.stale': QUIET,
  'board.cancel.requested': QUIET,
  'board.run.started': QUIET,
  'board.reply.received': QUIET,
  'board.completion.received': QUIET,
  'board.run.queued': { summary: 'board', notice: 'run.queued', told: true },
  'board.run.deduplicated': { summary: 'board', notice: null, told: false },
  'board.run.offered': QUIET,
  'board.run.claimed': { summary: 'none', notice: 'run.claimed', told: false },
  'board.run.running': { summary: 'none', notice: 'run.started', told: false },
  'board.run.cancel.requested': QUIET,
  'board.run.cancelled': { summary: 'board', notice: 'run.ended', told: false },
  'board.run.replied': QUIET,
  'board.run.finished': { summary: 'board', notice: 'run.ended', told: true },
  'board.run.resolved': { summary: 'board', notice: 'run.ended', told: true },
  'board.computer.registered': QUIET,
  'board.computer.online': { summary: 'none', notice: 'computer.online', told: false },
  'board.computer.offline': { summary: 'none', notice: 'computer.offline', told: false },
  'board.computer.draining': { summary: 'none', notice: null, told: true },
  'board.request.refused': { summary: 'board', notice: null, told: false },
  'board.request.repeated': QUIET,
} as const satisfies GroupRoles<typeof boardEvents>;
