import { queueDecider } from '../actors/lane/queueDecider.ts';
import type { QueueState } from '../actors/lane/queueState.ts';
import type { Projection } from './projection.ts';

/** Every computer's queue in the log (docs/rules.md#projections), by computer id: the scheduler's own fold. */
export const queueProjection: Projection<Record<string, QueueState>> = {
  name: 'queue',
  // 2: a frame addressed to another computer no longer marks a claim in flight as resent.
  // 3: no ledger of every run handled (issue 16): a frame records what the log says of its run.
  // 4: a fired timer ends its run's wait (notBefore 0), so an input folded after it with an earlier `at` cannot undo it.
  version: 4,
  initial: () => ({}),
  evolve(state, event) {
    const computer = queueDecider.scopeOf(event);
    if (computer === null) return state;
    state[computer] = queueDecider.evolve(state[computer] ?? queueDecider.initialState(computer), event);
    return state;
  },
};
