import type { NewDomainEvent } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { executionEvents } from '../../events/executionEvents.ts';
import type { Decider } from '../runtime/decider.ts';
import { decideRun } from './decideRun.ts';
import { evolveRun } from './evolveRun.ts';
import { type RunExecution, initialRunExecution } from './runState.ts';

const INPUTS = new Set([
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
]);

/** One claimed run on its computer: run it, stop it, report it. One state per run stream. */
export const runDecider: Decider<RunExecution> = {
  name: 'run',
  scopeOf(event) {
    if (!Object.hasOwn(executionEvents, event.type)) return null;
    const { owner, kind } = parseStream(event.stream);
    return owner !== null && kind === 'run' ? event.stream : null;
  },
  isInput: (event) => INPUTS.has(event.type),
  initialState: initialRunExecution,
  decide: decideRun,
  ignores(state: RunExecution, input: NewDomainEvent) {
    if (state.phase === 'settled') return true;
    switch (input.type) {
      case 'run.handed.over':
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
      default:
        return false;
    }
  },
  evolve: evolveRun,
};
