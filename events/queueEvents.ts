import * as z from 'zod';
import { defineEvent, eventGroup } from './define.ts';
import { queueReason } from './queueReasons.ts';
import { wording } from './replayFields.ts';
import { type GroupRoles, QUIET } from './roles.ts';
import { SafeId } from './safeId.ts';
import { BaseRef, RepoName } from './workspace.ts';

const runId = SafeId;
/** A life of a daemon (a random UUID), as the board reads it from `Runledger-Incarnation`: the same alphabet. */
export const Incarnation = SafeId;
/** What the world told the computer, in its words (an input's `reason`). */
const said = wording(z.string().min(1));
/** A decision's why: a code the audit words (queueReasons.ts), or an older version's sentence. */
const reason = queueReason;

/**
 * What a granted run starts with, as the host read it when its claim was answered: its budget in
 * seconds (0 = none; the board's, else the daemon's default) and the session its lane's last turn
 * left to resume (null: a fresh turn). Recorded on the answer, carried by the queue's `run.claimed`,
 * read by the run's actor, which starts the run from that decision.
 */
export const RunStart = z.strictObject({
  budgetS: z.number().nonnegative(),
  laneSession: z.string().min(1).max(200).nullable(),
  /**
   * The repository the run works in, as the host chose it: the run's own, else this computer's default
   * (`repo` null: the run asked for a `base` and there is none); absent: the lane's plain folder. `push`:
   * the daemon pushes lanes' branches to `origin` (`--push`).
   */
  workspace: z.strictObject({ repo: RepoName.nullable(), base: BaseRef.optional(), push: z.literal(true).optional() }).optional(),
});
export type RunStart = z.infer<typeof RunStart>;

/**
 * The computer's queue (docs/rules.md#computer-behaviour, "Queue and lanes", "Claims", "Frames and acks"). Inputs are
 * what the world told the computer; decisions are what its queue decided, each with a reason a person
 * can read in `runledger audit`. A run's queue events live in its lane's stream,
 * `<computer>/lane:<lane>` (the queue actor writes them all); what concerns no known lane (a bad
 * frame, the computer's settings) in `<computer>/computer:<computer>`.
 */
export const queueEvents = eventGroup(
  // Inputs.
  defineEvent('computer.configured', () =>
    z.strictObject({
      slots: z.number().int().positive(),
      /** Runs at once per agent login; a login not named here has no limit. */
      loginCapacity: z.record(z.string(), z.number().int().nonnegative()),
    }),
  ),
  /**
   * One life of the daemon begins (docs/rules.md#computer-behaviour, "Incarnations"): what belonged to the life before
   * (its drain, its shutdown) ends here. `incarnation` is drawn at random by the starting process and
   * sent to the board with this life's claims and push stream.
   */
  defineEvent('computer.started', () =>
    z.strictObject({ incarnation: Incarnation, host: z.string().min(1).max(255), pid: z.number().int().positive() }),
  ),
  defineEvent('scheduler.held', () => z.strictObject({ held: z.boolean(), reason: said })),
  defineEvent('drain.started', () => z.strictObject({ reason: said })),
  defineEvent('frame.received', () =>
    z.strictObject({
      frameId: z.string().min(1).max(200),
      kind: z.string().min(1).max(100),
      runId,
      lane: SafeId.optional(),
      agentId: SafeId.optional(),
      /** The computer the board addressed, when it said. */
      computerId: SafeId.optional(),
      /**
       * What the computer found of the run before deciding (see HandledLookup): `live` in its queue, else
       * how it last handled it, from the log (null: never). Absent in frames recorded by older versions.
       */
      handled: z.union([z.literal('live'), z.null(), z.enum(['skipped', 'withdrawn', 'ended'])]).optional(),
    }),
  ),
  /** A frame that could not be read: recorded, answered 400, never fatal. */
  defineEvent('frame.refused', () => z.strictObject({ frameId: z.string().max(200).nullable(), reason: said, excerpt: z.string().max(500) })),
  defineEvent('claim.answered', () =>
    z.strictObject({
      runId,
      /** HTTP status; 0 for a network error. */
      status: z.number().int().min(0).max(599),
      /** The refusal's code, from `{detail:{error}}`, `{detail}` or `{error}`. */
      code: z.string().max(200).optional(),
      skills: z.array(SafeId).optional(),
      /** What the board said to run, on a 200. The run token is not recorded: a re-claim returns it. */
      run: z
        .strictObject({
          prompt: z.string(),
          agentId: SafeId.nullable(),
          timeoutS: z.number().nonnegative().nullable(),
          /** The repository and base ref the run was submitted with (absent: none, and in older logs). */
          repo: RepoName.optional(),
          base: BaseRef.optional(),
        })
        .optional(),
      /** A 200 whose answer was refused, naming the field (`run.timeout_s: ...`): the run is completed as failed with it. */
      invalid: z.string().min(1).max(500).optional(),
      /** What the host read to start a granted run, recorded with its answer (absent in older logs: see RunStart). */
      start: RunStart.optional(),
    }),
  ),
  defineEvent('timer.fired', () => z.strictObject({ runId })),
  defineEvent('run.start.failed', () => z.strictObject({ runId, reason: said })),
  defineEvent('run.execution.ended', () => z.strictObject({ runId, ok: z.boolean(), reason: z.string().optional() })),
  /** Its run told the queue its agent stopped at the login's usage limit (`run.limit.reached`): the words, and the reset when said. */
  defineEvent('run.limit.reported', () => z.strictObject({ runId, words: z.string().min(1).max(1000), resetAt: z.number().int().optional() })),
  /** A login's usage limit is due to lift (its timer): runs of that login may start again. */
  defineEvent('login.limit.due', () => z.strictObject({ login: z.string().min(1).max(200) })),

  // Decisions.
  defineEvent('frame.acknowledged', () =>
    z.strictObject({
      frameId: z.string().max(200).nullable(),
      runId: runId.optional(),
      status: z.union([z.literal(200), z.literal(202), z.literal(400), z.literal(503)]),
      reason,
    }),
  ),
  defineEvent('run.queued', () => z.strictObject({ runId, lane: SafeId, agentId: SafeId.nullable(), arrival: z.number().int().nonnegative() })),
  /** `incarnation`: the life that claims it, which a claim repeated after a restart still names (absent in older logs). */
  defineEvent('run.claim.started', () => z.strictObject({ runId, attempt: z.number().int().positive(), incarnation: Incarnation.optional() })),
  /**
   * `start`: what its run decides its start from, for the run actor takes this decision as its input
   * (docs/rules.md#actors: actors talk by the log). Absent in older logs, whose runs were handed over by an input of
   * their own (`run.handed.over`): the shape tells which version wrote it. `heldUntil`: granted while its
   * login was at its usage limit, which lifts then: the run is held, claimed and heartbeated, and starts
   * only when its queue gives it a slot again (`run.limit.resumed`).
   */
  defineEvent('run.claimed', () =>
    z.strictObject({ runId, lane: SafeId, skills: z.array(SafeId), start: RunStart.optional(), heldUntil: z.number().int().optional() }),
  ),
  defineEvent('run.parked', () =>
    z.strictObject({ runId, busyWaits: z.number().int().positive(), notBefore: z.number().int().nonnegative(), reason, logged: z.boolean() }),
  ),
  defineEvent('run.unparked', () => z.strictObject({ runId, reason })),
  /**
   * A run whose agent stopped at its login's usage limit waits in its old place (still claimed, still
   * holding its lane's turn) until `notBefore`, and its login starts nothing until then. `strikes`:
   * the login's consecutive limits, this one included (the wait without a reset time doubles with
   * them); `logged`: the first report of this limit (later ones, from runs of the same login, are not said again).
   */
  defineEvent('run.limit.waiting', () =>
    z.strictObject({
      runId,
      login: z.string().min(1).max(200),
      notBefore: z.number().int().nonnegative(),
      strikes: z.number().int().positive(),
      words: z.string().min(1).max(1000),
      reason,
      logged: z.boolean(),
    }),
  ),
  /** Its login's limit lifted and a slot is free: the claimed run runs again (no new claim: the board still holds it as this computer's). */
  defineEvent('run.limit.resumed', () => z.strictObject({ runId, reason })),
  defineEvent('run.claim.retrying', () => z.strictObject({ runId, claimAttempts: z.number().int().positive(), notBefore: z.number().int(), reason })),
  defineEvent('run.requeued', () => z.strictObject({ runId, reason })),
  /**
   * `retry`: a skip that is no verdict on the run (its claims failed for passing reasons, or it came while
   * this life drained): it is not kept in the ledger, so the board's next push of it queues it again.
   */
  defineEvent('run.skipped', () => z.strictObject({ runId, reason, retry: z.literal(true).optional() })),
  defineEvent('run.withdrawn', () => z.strictObject({ runId, reason })),
  defineEvent('run.ended', () => z.strictObject({ runId, ok: z.boolean(), reason })),
);

/** What each queue event is to the summary, the subscriptions and the daemon's narration (see roles.ts). */
export const queueRoles = {
  'computer.configured': QUIET,
  'computer.started': QUIET,
  'scheduler.held': QUIET,
  'drain.started': QUIET,
  'frame.received': QUIET,
  'frame.refused': { summary: 'none', notice: null, told: true },
  'claim.answered': QUIET,
  'timer.fired': QUIET,
  'run.start.failed': QUIET,
  'run.execution.ended': QUIET,
  'run.limit.reported': QUIET,
  'login.limit.due': QUIET,
  'frame.acknowledged': QUIET,
  'run.queued': { summary: 'queue', notice: null, told: true },
  'run.claim.started': { summary: 'queue', notice: null, told: false },
  'run.claimed': { summary: 'none', notice: null, told: true },
  'run.parked': { summary: 'queue', notice: null, told: 'when.logged' },
  'run.unparked': { summary: 'queue', notice: null, told: false },
  'run.limit.waiting': { summary: 'none', notice: null, told: 'when.logged' },
  'run.limit.resumed': { summary: 'none', notice: null, told: true },
  'run.claim.retrying': { summary: 'queue', notice: null, told: false },
  'run.requeued': { summary: 'queue', notice: null, told: false },
  'run.skipped': { summary: 'queue', notice: null, told: true },
  'run.withdrawn': { summary: 'queue', notice: null, told: true },
  'run.ended': { summary: 'queue', notice: null, told: false },
} as const satisfies GroupRoles<typeof queueEvents>;
