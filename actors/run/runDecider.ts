import { parseStream } from '../../events/envelope.ts';
import { executionEvents } from '../../events/executionEvents.ts';
import { exhausted } from '../../events/exhaustive.ts';
import { decider } from '../decider.ts';
import { claimedRunStream, decideRun, RUN_INPUTS, RUN_MESSAGES, type RunDecision, type RunInput } from './decideRun.ts';
import { evolveRun } from './evolveRun.ts';
import { initialRunExecution, type RunExecution } from './runState.ts';

/** One claimed run on its computer: run it, stop it, report it. One state per run stream. */
export const runDecider = decider<RunExecution, RunInput, RunDecision>({
  name: 'run',
  inputs: RUN_INPUTS,
  scopeOf(event) {
    if (!Object.hasOwn(executionEvents, event.type)) return null;
    const { owner, kind } = parseStream(event.stream);
    return owner !== null && kind === 'run' ? event.stream : null;
  },
  // Its queue's claim is the run's start, when it carries what the host read for it; an older one's
  // run was handed over by an input of its own (`run.handed.over`), decided instead.
  messages: RUN_MESSAGES,
  messageScopeOf: (event) => (event.type === 'run.claimed' && event.data.start !== undefined ? claimedRunStream(event) : null),
  initialState: initialRunExecution,
  decide: decideRun,
  ignores(state, input) {
    if (state.phase === 'settled') return true;
    switch (input.type) {
      case 'run.handed.over':
      case 'run.claimed':
      case 'run.claim.refused':
        return state.phase !== 'new';
      case 'run.process.began':
      case 'run.session.announced':
        return state.phase !== 'requested' && state.phase !== 'executing';
      case 'run.process.exited':
        return state.phase !== 'executing' && state.phase !== 'requested';
      case 'run.completion.answered':
      case 'run.reply.refused':
        return state.phase !== 'completing';
      case 'run.completion.due':
        return state.phase !== 'completing' || input.at < state.completionNotBefore;
      case 'run.shutdown.before.start':
        return state.phase !== 'new' && state.phase !== 'handed';
      case 'run.heartbeat.answered':
        // Only answers that change something are recorded.
        return input.data.status !== 410 && !(input.data.cancelRequested && !state.cancelRequested);
      case 'run.cancel.pushed':
        // A cancel is decided once: the heartbeat's fallback may have come first.
        return state.cancelRequested;
      case 'run.found.interrupted':
        return false;
      case 'run.limit.over':
        return state.phase !== 'limited';
      case 'run.workspace.prepared':
      case 'run.workspace.failed':
        return state.phase !== 'preparing';
      case 'run.branch.pushed':
        return state.phase !== 'pushing';
      default:
        return exhausted(input, false);
    }
  },
  evolve: evolveRun,
});
