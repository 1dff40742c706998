import * as z from 'zod';
import { defineEvent, eventGroup } from './define.ts';
import { executionReason } from './executionReasons.ts';
import { RunStart } from './queueEvents.ts';
import { addedLater } from './replayFields.ts';
import { type GroupRoles, QUIET } from './roles.ts';
import { SafeId } from './safeId.ts';
import { Usage } from './usage.ts';
import { BaseRef, ChangeSummary, CommitSha, RepoName, TurnChanges, Workspace } from './workspace.ts';

const runId = SafeId;
/** A decision's why: a code the audit words (executionReasons.ts), or an older version's sentence. */
const reason = executionReason;
/** Ids agents announce are opaque tokens; only a plain one is ever put on a command line. */
const sessionId = z.string().min(1).max(200);
/** An agent's mark (adapters/agent/strays.ts): its daemon's pid and random hex. */
const AgentMark = z.string().regex(/^\d+\.[0-9a-f]{1,64}$/);
const result = z.strictObject({
  ok: z.boolean(),
  error: z
    .string()
    .max(64 * 1024)
    .optional(),
});

/**
 * A claimed run's life on its computer (docs/rules.md#computer-behaviour, "Execution", "Heartbeats, cancel,
 * resolution", "Completion"): in `<computer>/run:<id>`, and the lane's session in `<computer>/lane:<id>`.
 */
export const executionEvents = eventGroup(
  // Inputs.
  /** The queue handed a claimed run over to be run; carries what the decision reads. */
  defineEvent('run.handed.over', () =>
    z.strictObject({
      runId,
      lane: SafeId,
      /** The run's budget in seconds (0 = none), the board's or the daemon's default. */
      budgetS: z.number().nonnegative(),
      /** The session the lane's last turn left, to resume. */
      laneSession: sessionId.nullable(),
      /**
       * A turn of `runledger run`: executed here, with no board holding it, so it is never heartbeated
       * or completed; it settles once its process ends (its result is printed, and kept in `run.settled`).
       */
      local: z.literal(true).optional(),
    }),
  ),
  defineEvent('run.process.began', () =>
    z.strictObject({
      runId,
      pid: z.number().int().positive(),
      resuming: sessionId.nullable(),
      /** The mark in its agent's environment, which its every descendant inherits (optional: older logs lack it). */
      mark: AgentMark.optional(),
    }),
  ),
  defineEvent('run.session.announced', () => z.strictObject({ runId, sessionId })),
  defineEvent('run.process.exited', () =>
    z.strictObject({
      runId,
      outcome: z.enum(['exited', 'timed_out', 'cancelled', 'killed', 'failed_to_start']),
      exitCode: z.number().int().nullable(),
      signal: z.string().nullable(),
      /** The reply, capped at 1 MiB (and saying so when cut); null when there was none. */
      reply: z.string().nullable(),
      /** The end of an unfinished answer, salvaged on a timeout or a cancel. */
      tail: z.string().max(16 * 1024),
      stderrTail: z.string().max(16 * 1024),
      /** The agent's own words when its terminal event said the turn failed (optional: older logs lack it). */
      agentError: z
        .string()
        .max(4 * 1024)
        .optional(),
      /** What the turn cost, as the agent reported it (optional: older logs and plain agents lack it). */
      usage: Usage.optional(),
      /**
       * The agent said the login's usage or rate limit stopped the turn: its words, and when it resets
       * (ms) where it said (optional: older logs and plain agents lack it). Read in the shell, recorded
       * here, so a replay decides the wait from this and never reads the words again.
       */
      usageLimit: z.strictObject({ words: z.string().min(1).max(1000), resetAt: z.number().int().optional() }).optional(),
      /**
       * A turn in a worktree: what it changed against the HEAD recorded before it, as git said once the
       * process ended (optional: turns in plain folders, and older logs, have none); or why git could
       * not say (`changesError`: the repository was moved or deleted meanwhile), which fails the turn.
       */
      changes: TurnChanges.optional(),
      changesError: z.string().min(1).max(4096).optional(),
      /**
       * What the agent left running at its end and had to be killed (a child holding its output, a
       * grandchild in a session of its own): at most the first 20 (optional: none left, and older logs).
       */
      strays: z
        .array(z.strictObject({ pid: z.number().int().positive(), command: z.string().max(64).nullable() }))
        .min(1)
        .max(20)
        .optional(),
    }),
  ),
  /**
   * The lane's worktree is ready for the turn: where it is, its branch, and its HEAD before the turn
   * (what the turn's changes are read against). `made`: made for this turn (else kept from an earlier
   * one); `from`: what a new branch started from; `repaired`: what a crash had left that was set right.
   */
  defineEvent('run.workspace.prepared', () =>
    z.strictObject({
      runId,
      repo: RepoName,
      path: z.string().min(1).max(4096),
      branch: z.string().min(1).max(300),
      head: CommitSha,
      made: z.boolean(),
      from: z.string().min(1).max(300).optional(),
      repaired: z.string().min(1).max(1000).optional(),
    }),
  ),
  /** What `git push origin` said of the lane's branch; a failure is recorded and the run completed all the same (its work is on the branch here). */
  defineEvent('run.branch.pushed', () => z.strictObject({ runId, ok: z.boolean(), detail: z.string().min(1).max(4096) })),
  /** The lane's worktree could not be had (no such repository here, a base that does not exist, a repository gone): the run fails with `error`. */
  defineEvent('run.workspace.failed', () => z.strictObject({ runId, repo: RepoName.nullable(), error: z.string().min(1).max(4096) })),
  /** Only answers that change something are recorded: a cancel asked for, or the run resolved. */
  defineEvent('run.heartbeat.answered', () => z.strictObject({ runId, status: z.number().int().min(0).max(599), cancelRequested: z.boolean() })),
  /** The board pushed `run.cancel_requested` for it (frame `frameId`): decided as a heartbeat's `cancel_requested` is. */
  defineEvent('run.cancel.pushed', () => z.strictObject({ runId, frameId: z.string().min(1).max(200) })),
  defineEvent('run.completion.answered', () => z.strictObject({ runId, status: z.number().int().min(0).max(599) })),
  /** The board refused the reply itself (its content: 400, 413, 422), which no retry can change. */
  defineEvent('run.reply.refused', () => z.strictObject({ runId, status: z.number().int().min(400).max(499) })),
  defineEvent('run.completion.due', () => z.strictObject({ runId })),
  /**
   * Found at start-up: its process began but no exit was recorded (the daemon died meanwhile). `alive`:
   * its process group, or a process carrying its agent's mark (a `setsid` grandchild), still ran.
   */
  defineEvent('run.found.interrupted', () => z.strictObject({ runId, pid: z.number().int().nullable(), alive: z.boolean() })),
  /** `lane`: recorded by versions whose queue reads the run's end from its settle (absent in older logs). */
  defineEvent('run.shutdown.before.start', () => z.strictObject({ runId, lane: SafeId.optional() })),
  /**
   * A run that waited out its login's usage limit was given a slot again by its computer's queue
   * (`run.limit.resumed`): it runs again, resuming the session its agent announced.
   */
  defineEvent('run.limit.over', () => z.strictObject({ runId })),
  /** The board granted the claim, but its answer was refused at the edge; `problem` names the field. */
  defineEvent('run.claim.refused', () => z.strictObject({ runId, lane: SafeId, problem: z.string().min(1).max(500) })),

  // Decisions.
  /**
   * A run in a repository (its own, or the computer's default) starts by having its lane's worktree
   * made or found (an effect): `repo` null when the run named none and the computer has no default
   * although it asked for a `base`. Carries what its `run.execution.requested` will: its deadline, the
   * session it resumes and its budget.
   */
  defineEvent('run.workspace.requested', () =>
    z.strictObject({
      runId,
      lane: SafeId,
      repo: RepoName.nullable(),
      base: BaseRef.optional(),
      deadlineAt: z.number().int().nullable(),
      resume: sessionId.nullable(),
      budgetS: z.number().nonnegative(),
      /** The lane's branch goes to `origin` after a turn that committed to it (`--push`). */
      push: z.literal(true).optional(),
    }),
  ),
  /**
   * A turn that committed to its lane's branch, on a daemon that pushes (`--push`): the branch goes to
   * the repository's `origin` before the run is completed, so the lane's next turn, wherever it runs,
   * starts from it. `completion` is what the run is then completed with.
   */
  defineEvent('run.branch.push.requested', () =>
    z.strictObject({
      runId,
      repo: RepoName,
      path: z.string().min(1).max(4096),
      branch: z.string().min(1).max(300),
      completion: z.strictObject({ result, reply: z.string().nullable(), usage: Usage.optional(), changes: ChangeSummary.optional() }),
    }),
  ),
  /**
   * `budgetS`: on the first request of a run started from its queue's `run.claimed` (no `run.handed.over`
   * before it), the budget the deadline was drawn from; `resume` is then the lane's session it started with.
   */
  defineEvent('run.execution.requested', () =>
    z.strictObject({
      runId,
      lane: SafeId,
      deadlineAt: z.number().int().nullable(),
      resume: sessionId.nullable(),
      budgetS: z.number().nonnegative().optional(),
      /** The worktree it runs in (absent: the lane's plain folder). */
      workspace: Workspace.optional(),
    }),
  ),
  defineEvent('run.cancel.decided', () => z.strictObject({ runId, reason })),
  /**
   * The agent stopped at its login's usage or rate limit: not a failure of the turn. It stays claimed
   * (heartbeated) and goes back to its computer's queue, which decides when it runs again. `words`
   * are the agent's, `resetAt` when it said the limit lifts; `budgetLeftMs` is what its budget has
   * left (null: no limit), the budget counting time spent executing only.
   */
  defineEvent('run.limit.reached', () =>
    z.strictObject({
      runId,
      words: z.string().min(1).max(1000),
      resetAt: z.number().int().optional(),
      budgetLeftMs: z.number().int().nonnegative().nullable(),
      reason,
    }),
  ),
  /**
   * Its queue claimed it while its login was at its usage limit (`run.claimed` with `heldUntil`): it is
   * not started but held, claimed and heartbeated, keeping the start its claim carried (its budget, the
   * lane's session, its repository), until its queue gives it a slot again (`run.limit.over`).
   */
  defineEvent('run.start.held', () =>
    z.strictObject({
      runId,
      lane: SafeId,
      start: RunStart,
      until: z.number().int(),
      reason,
    }),
  ),
  /**
   * `mark`: on a restart's kill of a turn the last life left, its agent's mark, so that what escaped the
   * process group (a `setsid` grandchild) is found and stopped too (optional: a kill of a live turn has
   * its agent's handle, and older logs lack it). `reason`: no wording, its effect reads it (a user's
   * cancel is `cancelled_by_user`, a restart's kill `interrupted_by_restart`), so replay compares it.
   */
  defineEvent('run.kill.requested', () =>
    z.strictObject({ runId, pid: z.number().int().positive(), reason: z.string().min(1), mark: AgentMark.optional() }),
  ),
  defineEvent('run.resolved.elsewhere', () => z.strictObject({ runId, reason })),
  /**
   * `usage`: what the turn cost as its exit recorded it, posted with the completion. Added later: the
   * exit recorded its usage one version before the completion sent it (main at 3d74690), so that
   * version's completions were decided without it, from the same inputs.
   */
  /** `changes`: what a turn in a worktree changed, as its exit recorded it, posted with the completion. */
  defineEvent('run.completion.requested', () =>
    z.strictObject({
      runId,
      attempt: z.number().int().positive(),
      result,
      reply: z.string().nullable(),
      usage: addedLater(Usage.optional()),
      changes: ChangeSummary.optional(),
    }),
  ),
  defineEvent('run.completion.retrying', () => z.strictObject({ runId, attempt: z.number().int().positive(), notBefore: z.number().int(), reason })),
  /**
   * The retry schedule is spent and the board has not acknowledged: the run stays unreported (still
   * heartbeated, so its lease holds) and is reported again when its frame is redelivered or the
   * daemon restarts.
   */
  defineEvent('run.completion.paused', () => z.strictObject({ runId, attempts: z.number().int().positive(), reason, result: result.optional() })),
  /**
   * `result`: the outcome of a local turn, which has no completion to carry it; and of a run whose queue
   * takes this decision (or a paused completion) as its input, to free its slot and lane (see RunExecution.endTold).
   */
  defineEvent('run.settled', () => z.strictObject({ runId, reported: z.boolean(), reason, result: result.optional() })),
  defineEvent('lane.session.remembered', () => z.strictObject({ lane: SafeId, sessionId, runId })),
  defineEvent('lane.session.forgotten', () => z.strictObject({ lane: SafeId, sessionId, runId, reason })),
);

/** What each execution event is to the summary, the subscriptions and the daemon's narration (see roles.ts). */
export const executionRoles = {
  'run.handed.over': QUIET,
  'run.process.began': QUIET,
  'run.session.announced': QUIET,
  'run.process.exited': QUIET,
  'run.workspace.prepared': QUIET,
  'run.branch.pushed': QUIET,
  'run.workspace.failed': QUIET,
  'run.heartbeat.answered': QUIET,
  'run.cancel.pushed': QUIET,
  'run.completion.answered': QUIET,
  'run.reply.refused': QUIET,
  'run.completion.due': QUIET,
  'run.found.interrupted': QUIET,
  'run.shutdown.before.start': QUIET,
  'run.limit.over': QUIET,
  'run.claim.refused': QUIET,
  'run.workspace.requested': QUIET,
  'run.branch.push.requested': QUIET,
  'run.execution.requested': QUIET,
  'run.cancel.decided': { summary: 'none', notice: null, told: true },
  'run.limit.reached': QUIET,
  'run.start.held': QUIET,
  'run.kill.requested': QUIET,
  'run.resolved.elsewhere': { summary: 'none', notice: null, told: true },
  'run.completion.requested': { summary: 'none', notice: null, told: true },
  'run.completion.retrying': { summary: 'none', notice: null, told: true },
  'run.completion.paused': QUIET,
  'run.settled': { summary: 'none', notice: null, told: true },
  'lane.session.remembered': { summary: 'none', notice: null, told: true },
  'lane.session.forgotten': QUIET,
} as const satisfies GroupRoles<typeof executionEvents>;
