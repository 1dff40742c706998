import type { EventData, EventType, NewEventOf } from '../../events/catalog.ts';
import type { NewEvent } from '../../events/envelope.ts';
import { parseStream } from '../../events/envelope.ts';
import type { ExecutionReason } from '../../events/executionReasons.ts';
import { exhausted } from '../../events/exhaustive.ts';
import type { Usage } from '../../events/usage.ts';
import { type ChangeSummary, laneBranch, summaryOf } from '../../events/workspace.ts';
import { deadlineOf, roundedDuration } from './budget.ts';
import { sessionAfter, sessionMomentOf, shouldRetryFresh } from './resume.ts';
import { CANCELLED_MARKER, COMPLETION_RETRY_S, INTERRUPTED_BY_RESTART, type RunExecution, SHUTDOWN_BEFORE_START } from './runState.ts';

/** What a run actor is told: its hand-over, its process's life, the board's answers, its timers. */
export const RUN_INPUTS = [
  'run.handed.over',
  'run.process.began',
  'run.session.announced',
  'run.process.exited',
  'run.heartbeat.answered',
  'run.cancel.pushed',
  'run.completion.answered',
  'run.reply.refused',
  'run.completion.due',
  'run.found.interrupted',
  'run.shutdown.before.start',
  'run.claim.refused',
  'run.limit.over',
  'run.workspace.prepared',
  'run.workspace.failed',
  'run.branch.pushed',
] as const satisfies readonly EventType[];
/**
 * Its queue's committed decisions a run actor takes as its input (see `Decider.messageScopeOf`): the
 * run starts from its `run.claimed`, which carries what the host read for it (`start`).
 */
export const RUN_MESSAGES = ['run.claimed'] as const satisfies readonly EventType[];
export type RunInput = NewEventOf<(typeof RUN_INPUTS)[number] | (typeof RUN_MESSAGES)[number]>;

/** The run stream a `run.claimed` (in its lane's stream, `c1/lane:L`) starts: `c1/run:<id>`. */
export function claimedRunStream(claimed: { readonly stream: string; readonly data: { readonly runId: string } }): string {
  return `${parseStream(claimed.stream).owner ?? ''}/run:${claimed.data.runId}`;
}

type DecisionType =
  | 'run.workspace.requested'
  | 'run.branch.push.requested'
  | 'run.execution.requested'
  | 'run.kill.requested'
  | 'run.cancel.decided'
  | 'run.limit.reached'
  | 'run.start.held'
  | 'run.resolved.elsewhere'
  | 'run.completion.requested'
  | 'run.completion.retrying'
  | 'run.completion.paused'
  | 'run.settled'
  | 'lane.session.remembered'
  | 'lane.session.forgotten';
/** What a run actor decides, all in the run's own stream. */
export type RunDecision = NewEventOf<DecisionType>;

type Decision = RunDecision;
type Result = { ok: boolean; error?: string };
/** A decision of type `T` in the input's stream, at its time. */
type On = <T extends DecisionType>(type: T, data: EventData<T>) => NewEvent<T, EventData<T>>;

/** A claimed run's decisions (docs/rules.md#computer-behaviour, "Execution" to "Completion"). Pure. */
export function decideRun(state: RunExecution, input: RunInput): Decision[] {
  const at = input.at;
  const { on, onLane, complete, runId } = helpersOf(state, input);
  switch (input.type) {
    case 'run.handed.over': {
      const { lane, budgetS, laneSession } = input.data;
      return start(state, { lane, budgetS, laneSession }, at, false, { on, complete, runId });
    }
    case 'run.claimed': {
      // A message: messageScopeOf takes only a `run.claimed` that carries its start.
      const { lane, start: claimedStart, heldUntil } = input.data;
      // Claimed while its login is at its usage limit: it keeps its start and waits, as a run the limit stopped.
      if (heldUntil !== undefined) {
        return [on('run.start.held', { runId, lane, start: claimedStart!, until: heldUntil, reason: { code: 'held.at.limit' } })];
      }
      return start(state, { lane, ...claimedStart! }, at, true, { on, complete, runId });
    }
    case 'run.process.began':
      // A cancel or a resolution that came while it was being spawned stops it now.
      if (state.resolved || state.cancelRequested) {
        return [on('run.kill.requested', { runId, pid: input.data.pid, reason: state.resolved ? 'resolved on the board' : CANCELLED_MARKER })];
      }
      return [];
    case 'run.session.announced':
      if (input.data.sessionId === state.announced) return [];
      return [onLane('lane.session.remembered', { lane: state.lane!, sessionId: input.data.sessionId, runId })];
    case 'run.process.exited':
      return answerExit(state, input.data, at, { on, onLane, complete, runId });
    case 'run.heartbeat.answered': {
      const { status, cancelRequested } = input.data;
      if (status === 410) return resolve(state, { on, runId });
      if (!cancelRequested) return [];
      return decideCancel(state, { code: 'cancel.asked' }, { on, complete, runId });
    }
    case 'run.cancel.pushed':
      return decideCancel(state, { code: 'cancel.pushed' }, { on, complete, runId });
    case 'run.completion.answered':
      return answerCompletion(state, input.data.status, at, { on, runId });
    case 'run.reply.refused':
      return answerReplyRefused(state, input.data.status, { on, onLane, complete, runId });
    case 'run.completion.due':
      return [complete(state.result ?? { ok: false, error: 'no result recorded' }, state.reply, state.usage, state.changes)];
    case 'run.workspace.prepared': {
      // Its worktree is ready and its HEAD recorded: the turn runs there, its changes read against that HEAD.
      const { repo, path, head } = input.data;
      const workspace = { repo, path, head };
      return [on('run.execution.requested', { runId, lane: state.lane!, deadlineAt: state.deadlineAt, resume: state.resuming, workspace })];
    }
    case 'run.branch.pushed':
      // Pushed or not, the turn is over: its work is on the lane's branch here either way (the audit says how the push went).
      return [complete(state.result ?? { ok: false, error: 'no result recorded' }, state.reply, state.usage, state.changes)];
    case 'run.workspace.failed': {
      const result = { ok: false, error: input.data.error };
      return [state.local ? settleLocal(result, on, runId) : complete(result)];
    }
    case 'run.found.interrupted':
      return answerInterrupted(state, input.data, { on, complete, runId });
    case 'run.shutdown.before.start':
      return [complete({ ok: false, error: SHUTDOWN_BEFORE_START })];
    case 'run.limit.over':
      return limitOver(state, at, { on, complete, runId });
    case 'run.claim.refused':
      // Granted, so reported: the board hears why at once instead of waiting out the lease.
      return [complete({ ok: false, error: `the board's claim answer was refused: ${input.data.problem}` })];
    default:
      return exhausted(input, []);
  }
}

/** How the run's decisions are made: in its own stream, at the input's time, a completion with its next attempt. */
function helpersOf(state: RunExecution, input: RunInput): Required<Helpers> {
  // Its queue's `run.claimed` is in the lane's stream: the run's decisions go in the run's own.
  const stream = input.type === 'run.claimed' ? claimedRunStream(input) : input.stream;
  const runId = input.type === 'run.claimed' ? input.data.runId : parseStream(input.stream).id;
  const on: On = (type, data) => ({ stream, type, data: endOf(state, type, data), at: input.at });
  const complete = (result: Result, reply: string | null = null, usage?: Usage, changes?: ChangeSummary): Decision =>
    on('run.completion.requested', {
      runId,
      attempt: state.completionAttempts + 1,
      result,
      reply,
      ...(usage ? { usage } : {}),
      ...(changes ? { changes } : {}),
    });
  // The lane's session memory is written in the run's own stream (the run actor writes only there);
  // the lane-sessions projection gathers it by lane. A run remembers or forgets a session only once it
  // was handed over, which gave it its lane (hence `state.lane!` in these).
  return { on, onLane: on, complete, runId };
}

/** The board's answer to its completion: settled once acknowledged (or already terminal), else retried, then paused. */
function answerCompletion(state: RunExecution, status: number, at: number, { on, runId }: Helpers): Decision[] {
  if (status === 200 || status === 201) return [on('run.settled', { runId, reported: true, reason: { code: 'acknowledged' } })];
  if (status === 409 || status === 410) return [on('run.settled', { runId, reported: true, reason: { code: 'already.terminal', status } })];
  const failed = state.completionAttempts;
  const wait = COMPLETION_RETRY_S[failed - 1];
  if (wait === undefined) {
    return [on('run.completion.paused', { runId, attempts: failed, reason: { code: 'unacknowledged', attempts: failed, status } })];
  }
  return [
    on('run.completion.retrying', {
      runId,
      attempt: failed + 1,
      notBefore: at + wait * 1000,
      reason: { code: 'completion.failed', status, waitS: wait },
    }),
  ];
}

/**
 * Its answer never reached the conversation: resuming the session would carry on from a turn nobody
 * saw. The run is reported failed instead, with no reply to post again.
 */
function answerReplyRefused(state: RunExecution, status: number, { onLane, complete, runId }: Required<Helpers>): Decision[] {
  const remembered = state.announced ?? state.session;
  const forget = remembered !== null && sessionAfter('rejected', state.session, state.announced) === null;
  return [
    ...(forget ? [onLane('lane.session.forgotten', { lane: state.lane!, sessionId: remembered, runId, reason: { code: 'reply.refused' } })] : []),
    complete({ ok: false, error: `posting the reply failed with HTTP ${status}` }),
  ];
}

/** Found at start-up with no exit recorded: its process is killed if alive, and the run ends as interrupted. */
function answerInterrupted(
  state: RunExecution,
  { pid, alive }: EventData<'run.found.interrupted'>,
  { on, complete, runId }: Required<Pick<Helpers, 'on' | 'complete' | 'runId'>>,
): Decision[] {
  const kill = alive && pid !== null ? [on('run.kill.requested', { runId, pid, reason: INTERRUPTED_BY_RESTART, mark: state.mark })] : [];
  if (state.resolved) return [...kill, on('run.settled', { runId, reported: false, reason: { code: 'resolved' } })];
  if (state.local) return [...kill, settleLocal({ ok: false, error: INTERRUPTED_BY_RESTART }, on, runId)];
  return [...kill, complete({ ok: false, error: INTERRUPTED_BY_RESTART })];
}

/** Its queue gave it a slot again once its login's usage limit lifted. */
function limitOver(state: RunExecution, at: number, helpers: Required<Pick<Helpers, 'on' | 'complete' | 'runId'>>): Decision[] {
  // A run held since its claim starts now, as it would have then, with its whole budget from now.
  if (state.heldStart) return start(state, { lane: state.lane!, ...state.heldStart }, at, true, helpers);
  // The same turn again, in the session its agent announced (the limit kept it), with what its budget had left.
  return [
    helpers.on('run.execution.requested', {
      runId: helpers.runId,
      lane: state.lane!,
      deadlineAt: state.budgetLeftMs === null || state.budgetLeftMs === undefined ? null : at + state.budgetLeftMs,
      resume: state.announced ?? state.session,
      ...(state.workspace ? { workspace: state.workspace } : {}),
    }),
  ];
}

type RunStartWorkspace = NonNullable<NonNullable<EventData<'run.claimed'>['start']>['workspace']>;

interface Helpers {
  on: On;
  onLane?: On;
  complete?: (result: Result, reply?: string | null, usage?: Usage, changes?: ChangeSummary) => Decision;
  runId: string;
}

/**
 * The run's end as its queue reads it: a settle or a paused completion of a run whose queue takes it as
 * its input (`endTold`) carries the result it came to, if any (the queue frees its slot and lane, saying
 * how it went). Other decisions, and those of runs an older version handed over, are as given.
 */
function endOf<T extends DecisionType>(state: RunExecution, type: T, data: EventData<T>): EventData<T> {
  if (!state.endTold || state.result === null || (type !== 'run.settled' && type !== 'run.completion.paused')) return data;
  return Object.hasOwn(data as object, 'result') ? data : { ...data, result: state.result };
}

/**
 * A claimed run starts: spawned with its budget's deadline, resuming its lane's session. Started from its
 * queue's `run.claimed`, its request records the budget (the state reads it back from there); from an
 * older version's `run.handed.over`, the input had it.
 */
function start(
  state: RunExecution,
  { lane, budgetS, laneSession, workspace }: { lane: string; budgetS: number; laneSession: string | null; workspace?: RunStartWorkspace },
  at: number,
  fromClaim: boolean,
  { on, complete, runId }: Required<Pick<Helpers, 'on' | 'complete' | 'runId'>>,
): Decision[] {
  if (state.cancelRequested) return [complete({ ok: false, error: CANCELLED_MARKER })];
  if (state.resolved) return [on('run.settled', { runId, reported: false, reason: { code: 'resolved.before.start' } })];
  const deadlineAt = deadlineOf(at, budgetS);
  // A run in a repository first has its lane's worktree made or found; it is requested from that answer.
  if (workspace) {
    const { repo, base, push } = workspace;
    return [
      on('run.workspace.requested', {
        runId,
        lane,
        repo,
        ...(base === undefined ? {} : { base }),
        deadlineAt,
        resume: laneSession,
        budgetS,
        ...(push ? { push } : {}),
      }),
    ];
  }
  return [on('run.execution.requested', { runId, lane, deadlineAt, resume: laneSession, ...(fromClaim ? { budgetS } : {}) })];
}

/** A cancel from the board, pushed or read from a heartbeat answer: decided once, whichever comes first. */
function decideCancel(
  state: RunExecution,
  reason: ExecutionReason,
  { on, complete, runId }: Required<Pick<Helpers, 'on' | 'complete' | 'runId'>>,
): Decision[] {
  if (state.cancelRequested) return [];
  const decided = on('run.cancel.decided', { runId, reason });
  if (state.phase === 'executing' && state.pid !== null)
    return [decided, on('run.kill.requested', { runId, pid: state.pid, reason: CANCELLED_MARKER })];
  // Claimed but not started (or waiting out a usage limit): it never starts again, and is completed with the marker.
  if (state.phase === 'new' || state.phase === 'handed' || state.phase === 'preparing' || state.phase === 'limited')
    return [decided, complete({ ok: false, error: CANCELLED_MARKER })];
  return [decided];
}

function resolve(state: RunExecution, { on, runId }: Helpers): Decision[] {
  if (state.resolved) return [];
  const noted = on('run.resolved.elsewhere', { runId, reason: { code: 'resolved.elsewhere' } });
  if (state.phase === 'executing' && state.pid !== null)
    return [noted, on('run.kill.requested', { runId, pid: state.pid, reason: 'resolved on the board' })];
  if (state.phase === 'requested') return [noted];
  return [noted, on('run.settled', { runId, reported: false, reason: { code: 'resolved' } })];
}

function answerExit(state: RunExecution, exit: EventData<'run.process.exited'>, at: number, h: Required<Helpers>): Decision[] {
  // The agent's own verdict is where a refused resume may say so (Claude's `errors`, Codex's turn.failed).
  const reply =
    exit.reply === null
      ? ({ ok: false, reason: exit.agentError ?? 'no reply' } as const)
      : ({ ok: true, text: exit.reply, truncated: false } as const);
  const result = {
    outcome: exit.outcome === 'failed_to_start' ? ('exited' as const) : exit.outcome,
    exitCode: exit.exitCode,
    reply,
    stderrTail: exit.stderrTail,
    tail: exit.tail,
  };
  const decisions: Decision[] = [];
  const remembered = state.announced ?? state.session;

  // The login's usage limit stopped it (docs/rules.md#computer-behaviour): not a failure. It keeps its session and its claim and
  // goes back to its queue, which decides when it runs again. A local turn has no queue: it fails, with the words.
  const limit = exit.usageLimit;
  if (limit !== undefined && exit.outcome === 'exited' && !state.resolved && !state.cancelRequested && !state.local) {
    const budgetLeftMs = state.deadlineAt === null ? null : Math.max(0, state.deadlineAt - at);
    return [
      h.on('run.limit.reached', {
        runId: h.runId,
        words: limit.words,
        ...(limit.resetAt === undefined ? {} : { resetAt: limit.resetAt }),
        budgetLeftMs,
        reason: { code: 'usage.limit' },
      }),
    ];
  }

  // A refused resume costs nothing of the budget: run the turn again, fresh, inside the same deadline.
  if (
    !state.resolved &&
    shouldRetryFresh({ resuming: state.resuming, result, now: at, deadlineAt: state.deadlineAt, cancelRequested: state.cancelRequested })
  )
    return retryFresh(state, exit, h);

  const moment = exit.outcome === 'failed_to_start' ? 'failed' : sessionMomentOf(result);
  const after = sessionAfter(moment, state.session, state.announced);
  if (remembered !== null && after === null) {
    decisions.push(
      h.onLane('lane.session.forgotten', {
        lane: state.lane!,
        sessionId: remembered,
        runId: h.runId,
        reason: { code: 'turn.ended', moment },
      }),
    );
  }
  if (state.resolved) return [...decisions, h.on('run.settled', { runId: h.runId, reported: false, reason: { code: 'resolved' } })];
  const outcome = resultOf(state, exit);
  if (state.local) return [...decisions, settleLocal(outcome, h.on, h.runId)];
  const changes = exit.changes && summaryOf(exit.changes);
  const replyText = outcome.ok ? exit.reply : null;
  // A turn that committed to its lane's branch, on a daemon that pushes: the branch goes to origin first,
  // so the lane's next turn, wherever it is claimed once this one is completed, starts from it.
  if (state.push && state.workspace && changes && changes.commitCount > 0 && !state.local) {
    const { repo, path } = state.workspace;
    const completion = { result: outcome, reply: replyText, ...(exit.usage ? { usage: exit.usage } : {}), changes };
    return [...decisions, h.on('run.branch.push.requested', { runId: h.runId, repo, path, branch: laneBranch(state.lane!), completion })];
  }
  return [...decisions, h.complete(outcome, replyText, exit.usage, changes)];
}

/** Its resume was refused: the sessions it named are forgotten and the turn runs again, fresh. */
function retryFresh(state: RunExecution, exit: EventData<'run.process.exited'>, h: Required<Helpers>): Decision[] {
  const decisions: Decision[] = [];
  if (state.resuming)
    decisions.push(
      h.onLane('lane.session.forgotten', {
        lane: state.lane!,
        sessionId: state.resuming,
        runId: h.runId,
        reason: { code: 'resume.refused' },
      }),
    );
  // Claude Code names a new session even as it refuses (one it never keeps): not a conversation to resume.
  // Read from the agent's own verdict (`agentError`), which logs written before it was recorded lack:
  // their refused resumes replay as they were decided.
  if (exit.agentError !== undefined && state.announced !== null && state.announced !== state.resuming)
    decisions.push(
      h.onLane('lane.session.forgotten', {
        lane: state.lane!,
        sessionId: state.announced,
        runId: h.runId,
        reason: { code: 'announced.refusing' },
      }),
    );
  // A process ran, so the run was handed over and has its lane.
  decisions.push(
    h.on('run.execution.requested', {
      runId: h.runId,
      lane: state.lane!,
      deadlineAt: state.deadlineAt,
      resume: null,
      ...(state.workspace ? { workspace: state.workspace } : {}),
    }),
  );
  return decisions;
}

/**
 * A local turn (`runledger run`) ends where a claimed run would be completed: nobody holds it to
 * report to, so it settles at once, unreported, keeping its result (the reply is in its exit).
 */
function settleLocal(result: Result, on: Helpers['on'], runId: string): Decision {
  const reason: ExecutionReason = { code: 'local', ok: result.ok, ...(result.error === undefined ? {} : { error: result.error }) };
  return on('run.settled', { runId, reported: false, reason, result });
}

/** The completion a finished process earns; the error says what a person needs to know. */
function resultOf(state: RunExecution, exit: EventData<'run.process.exited'>): Result {
  const salvage = exit.tail ? ` — unfinished answer: …${exit.tail.slice(-2000)}` : '';
  if (exit.outcome === 'cancelled' || state.cancelRequested) return { ok: false, error: CANCELLED_MARKER };
  if (exit.outcome === 'timed_out') {
    const budget = state.budgetMs === null ? '' : ` after ${roundedDuration(state.budgetMs)}, its budget`;
    return { ok: false, error: `timed out${budget}${salvage}` };
  }
  if (exit.outcome === 'killed') return { ok: false, error: `killed before it finished${salvage}` };
  if (exit.outcome === 'failed_to_start') return { ok: false, error: `the agent command could not start: ${exit.stderrTail || 'unknown error'}` };
  // What the turn changed could not be read (its repository was moved or deleted under it): its work is not on
  // the record, and that is the cause to name, ahead of whatever the agent made of a repository gone from under it.
  if (exit.changesError !== undefined) return { ok: false, error: exit.changesError };
  // The agent's terminal event said the turn failed: its words, whatever the exit code (Codex has been
  // seen exiting 0 after a failed turn).
  if (exit.agentError !== undefined) {
    const code = exit.exitCode === 0 ? '' : ` (${exit.exitCode === null ? `signal ${exit.signal}` : `exit code ${exit.exitCode}`})`;
    return { ok: false, error: `the agent reported a failure${code}: ${exit.agentError.slice(0, 2000)}` };
  }
  if (exit.exitCode !== 0) {
    return {
      ok: false,
      error: `the agent exited with ${exit.exitCode === null ? `signal ${exit.signal}` : `code ${exit.exitCode}`}${exit.stderrTail ? `: ${exit.stderrTail.slice(-2000)}` : ''}`,
    };
  }
  if (exit.reply === null || exit.reply.trim() === '') return { ok: false, error: 'the agent exited without a usable reply' };
  return { ok: true };
}
