import { parseStream } from '../events/envelope.ts';
import type { Projection } from './projection.ts';

/** The demo counters' totals, by counter id. */
export const countersProjection: Projection<Record<string, number>> = {
  name: 'counters',
  version: 1,
  initial: () => ({}),
  evolve(state, event) {
    if (event.type === 'counter.bumped') state[parseStream(event.stream).id] = event.data.total;
    return state;
  },
};
