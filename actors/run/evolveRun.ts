import type { DomainEvent, TypesOutside } from '../../events/catalog.ts';
import { ignoreRest } from '../../events/exhaustive.ts';
import { budgetMsOf } from './budget.ts';
import type { RunExecution } from './runState.ts';

/** Folds one event of a run's stream into its execution state (in place, see Projection). */
export function evolveRun(state: RunExecution, event: DomainEvent): RunExecution {
  switch (event.type) {
    case 'run.handed.over':
      state.phase = 'handed';
      state.lane = event.data.lane;
      state.session = event.data.laneSession;
      state.budgetMs = budgetMsOf(event.data.budgetS);
      state.local = event.data.local === true;
      break;
    case 'run.claim.refused':
      state.lane = event.data.lane;
      break;
    case 'run.shutdown.before.start':
      if (event.data.lane !== undefined) {
        state.lane = event.data.lane;
        state.endTold = true;
      }
      break;
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
      break;
    case 'run.branch.push.requested': {
      const { result, reply, usage, changes } = event.data.completion;
      state.phase = 'pushing';
      state.pid = null;
      delete state.mark;
      state.result = result;
      state.reply = reply;
      if (usage) state.usage = usage;
      if (changes) state.changes = changes;
      break;
    }
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
      state.pid = null;
      delete state.mark;
      break;
    case 'run.start.held':
      // Claimed, not started: it waits as a run the limit stopped does (heartbeated, not drained), its start kept.
      state.phase = 'limited';
      state.lane = event.data.lane;
      state.session = event.data.start.laneSession;
      state.budgetMs = budgetMsOf(event.data.start.budgetS);
      state.heldStart = event.data.start;
      state.endTold = true;
      break;
    case 'run.limit.reached':
      state.phase = 'limited';
      state.pid = null;
      delete state.mark;
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
      state.phase = 'completing';
      state.completionAttempts = event.data.attempt;
      state.result = event.data.result;
      state.reply = event.data.reply;
      if (event.data.usage) state.usage = event.data.usage;
      if (event.data.changes) state.changes = event.data.changes;
      break;
    case 'run.completion.paused':
      // Due again from now on, whenever a redelivery (or a restart) asks.
      state.completionNotBefore = event.at;
      break;
    case 'run.completion.retrying':
      state.completionNotBefore = event.data.notBefore;
      break;
    case 'run.settled':
      state.phase = 'settled';
      state.pid = null;
      delete state.mark;
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
