import type { DomainEvent, EventData, EventOf, TypesOutside } from '../../events/catalog.ts';
import { ignoreRest } from '../../events/exhaustive.ts';
import { budgetMsOf } from './budget.ts';
import type { RunExecution } from './runState.ts';

/** Folds one event of a run's stream into its execution state (in place, see Projection). */
export function evolveRun(state: RunExecution, event: DomainEvent): RunExecution {
  switch (event.type) {
    case 'run.handed.over':
    case 'run.claim.refused':
    case 'run.shutdown.before.start':
    case 'run.workspace.requested':
    case 'run.execution.requested':
    case 'run.start.held':
      evolveStart(state, event);
      break;
    case 'run.branch.push.requested':
      state.phase = 'pushing';
      processGone(state);
      keepCompletion(state, event.data.completion);
      break;
    case 'run.process.began':
      state.phase = 'executing';
      state.pid = event.data.pid;
      if (event.data.mark !== undefined) state.mark = event.data.mark;
      break;
    case 'run.session.announced':
      state.announced = event.data.sessionId;
      break;
    case 'run.process.exited':
      processGone(state);
      break;
    case 'run.limit.reached':
      state.phase = 'limited';
      processGone(state);
      state.budgetLeftMs = event.data.budgetLeftMs;
      break;
    case 'run.cancel.decided':
      state.cancelRequested = true;
      break;
    case 'run.resolved.elsewhere':
      state.resolved = true;
      break;
    case 'lane.session.forgotten':
      if (state.session === event.data.sessionId) state.session = null;
      if (state.announced === event.data.sessionId) state.announced = null;
      break;
    case 'run.completion.requested':
    case 'run.completion.paused':
    case 'run.completion.retrying':
    case 'run.settled':
      evolveCompletion(state, event);
      break;
    // Inputs whose effect is in their decisions, decisions for the process's shell, and the lane's memory it keeps.
    case 'run.heartbeat.answered':
    case 'run.cancel.pushed':
    case 'run.workspace.prepared':
    case 'run.workspace.failed':
    case 'run.branch.pushed':
    case 'run.completion.answered':
    case 'run.reply.refused':
    case 'run.completion.due':
    case 'run.found.interrupted':
    case 'run.limit.over':
    case 'run.kill.requested':
    case 'lane.session.remembered':
      break;
    default:
      ignoreRest<TypesOutside<'execution'>>(event);
      break;
  }
  return state;
}

/** What a run starts with: its lane, the session it resumes, its budget, as its hand-over, claim or request told it. */
type StartEvent = EventOf<
  'run.handed.over' | 'run.claim.refused' | 'run.shutdown.before.start' | 'run.workspace.requested' | 'run.execution.requested' | 'run.start.held'
>;

function evolveStart(state: RunExecution, event: StartEvent): void {
  switch (event.type) {
    case 'run.handed.over':
      state.phase = 'handed';
      state.lane = event.data.lane;
      state.session = event.data.laneSession;
      state.budgetMs = budgetMsOf(event.data.budgetS);
      state.local = event.data.local === true;
      return;
    case 'run.claim.refused':
      state.lane = event.data.lane;
      return;
    case 'run.shutdown.before.start':
      if (event.data.lane !== undefined) {
        state.lane = event.data.lane;
        state.endTold = true;
      }
      return;
    case 'run.workspace.requested':
      // What a request started from the queue's `run.claimed` holds (below), held while its worktree is made.
      delete state.heldStart;
      state.phase = 'preparing';
      state.lane = event.data.lane;
      state.session = event.data.resume;
      state.resuming = event.data.resume;
      state.budgetMs = budgetMsOf(event.data.budgetS);
      state.deadlineAt = event.data.deadlineAt;
      state.endTold = true;
      if (event.data.push) state.push = true;
      return;
    case 'run.execution.requested':
      delete state.heldStart;
      if (event.data.workspace) state.workspace = event.data.workspace;
      // The first request of a run started from its queue's `run.claimed`: what a hand-over held.
      if (event.data.budgetS !== undefined) {
        state.lane = event.data.lane;
        state.session = event.data.resume;
        state.budgetMs = budgetMsOf(event.data.budgetS);
        state.endTold = true;
      }
      state.phase = 'requested';
      state.deadlineAt = event.data.deadlineAt;
      state.resuming = event.data.resume;
      return;
    case 'run.start.held':
      // Claimed, not started: it waits as a run the limit stopped does (heartbeated, not drained), its start kept.
      state.phase = 'limited';
      state.lane = event.data.lane;
      state.session = event.data.start.laneSession;
      state.budgetMs = budgetMsOf(event.data.start.budgetS);
      state.heldStart = event.data.start;
      state.endTold = true;
      return;
  }
}

/** Its completion: sent, retried, paused unreported, or settled. */
function evolveCompletion(
  state: RunExecution,
  event: EventOf<'run.completion.requested' | 'run.completion.paused' | 'run.completion.retrying' | 'run.settled'>,
): void {
  switch (event.type) {
    case 'run.completion.requested':
      state.phase = 'completing';
      state.completionAttempts = event.data.attempt;
      keepCompletion(state, event.data);
      return;
    case 'run.completion.paused':
      // Due again from now on, whenever a redelivery (or a restart) asks.
      state.completionNotBefore = event.at;
      return;
    case 'run.completion.retrying':
      state.completionNotBefore = event.data.notBefore;
      return;
    case 'run.settled':
      state.phase = 'settled';
      processGone(state);
  }
}

/** What the run is completed with, kept to be sent (again): its result, its reply, what it cost and changed. */
function keepCompletion(state: RunExecution, { result, reply, usage, changes }: EventData<'run.branch.push.requested'>['completion']): void {
  state.result = result;
  state.reply = reply;
  if (usage) state.usage = usage;
  if (changes) state.changes = changes;
}

/** Its process is over (exited, stopped by a limit, or its run settled): no pid or mark to kill any more. */
function processGone(state: RunExecution): void {
  state.pid = null;
  delete state.mark;
}
