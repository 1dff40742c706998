import type { DomainEvent } from '../../events/catalog.ts';
import { boardProjection } from '../../projections/board.ts';
import { executionsProjection } from '../../projections/executions.ts';
import type { Projection } from '../../projections/projection.ts';
import { queueProjection } from '../../projections/queue.ts';
import type { AnyDecider } from '../decider.ts';

/** Every state a decider holds, by scope (a computer for the queue, a run stream for a run). */
export type ScopedStates = Record<string, unknown>;

/**
 * A decider's fold has a meaning that changes when its projection's does (the queue projection is the
 * queue decider's fold, the board projection the board's): a snapshot of an older meaning is then
 * ignored, exactly as an older checkpoint is.
 */
const VERSIONS: Readonly<Record<string, number>> = {
  queue: queueProjection.version,
  board: boardProjection.version,
  run: executionsProjection.version,
};

/**
 * The states `replay` folds for one decider, as a projection: what `replay --until` and `replay --run`
 * start from when a snapshot of it is stored, and what `rebuild` checks those snapshots against.
 * Its fold is exactly replay's: every event of a scope, inputs and decisions, through `evolve`.
 */
export function deciderProjection(decider: AnyDecider): Projection<ScopedStates> {
  return {
    name: `decider:${decider.name}`,
    version: VERSIONS[decider.name] ?? 1,
    initial: () => ({}),
    evolve(states, event: DomainEvent) {
      const scope = decider.scopeOf(event);
      if (scope === null) return states;
      states[scope] = decider.evolve(Object.hasOwn(states, scope) ? states[scope] : decider.initialState(scope), event);
      return states;
    },
  };
}

const cache = new WeakMap<AnyDecider, Projection<ScopedStates>>();

/** One projection object per decider, so its snapshot name is computed once. */
export function projectionOf(decider: AnyDecider): Projection<ScopedStates> {
  let projection = cache.get(decider);
  if (!projection) {
    projection = deciderProjection(decider);
    cache.set(decider, projection);
  }
  return projection;
}
