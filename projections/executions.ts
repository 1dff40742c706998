import { evolveRun } from '../actors/run/evolveRun.ts';
import { initialRunExecution, type RunExecution } from '../actors/run/runState.ts';
import { parseStream } from '../events/envelope.ts';
import { executionEvents } from '../events/executionEvents.ts';
import type { Projection } from './projection.ts';

export type ExecutionsState = Record<string, Record<string, RunExecution>>;

/**
 * Every claimed run not yet settled, by computer: what the heartbeat loop beats for, and what a
 * restart must finish (kill a process that outlived its daemon, report what was never reported).
 */
export const executionsProjection: Projection<ExecutionsState> = {
  name: 'executions',
  version: 2,
  initial: () => ({}),
  evolve(state, event) {
    if (!Object.hasOwn(executionEvents, event.type)) return state;
    const { owner, kind, id } = parseStream(event.stream);
    if (owner === null || kind !== 'run') return state;
    const runs = (state[owner] ??= {});
    const run = evolveRun(runs[id] ?? initialRunExecution(), event);
    if (run.phase === 'settled') delete runs[id];
    else runs[id] = run;
    return state;
  },
};
