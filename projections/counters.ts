import type { TypesOutside } from '../events/catalog.ts';
import { parseStream } from '../events/envelope.ts';
import { ignoreRest } from '../events/exhaustive.ts';
import type { Projection } from './projection.ts';

/** The demo counters' totals, by counter id. */
export const countersProjection: Projection<Record<string, number>> = {
  name: 'counters',
  version: 1,
  initial: () => ({}),
  evolve(state, event) {
    switch (event.type) {
      case 'counter.bumped':
        state[parseStream(event.stream).id] = event.data.total;
        break;
      case 'counter.bump.requested':
      case 'counter.bump.refused':
      case 'counter.milestone.reached':
        break;
      default:
        ignoreRest<TypesOutside<'demo'>>(event);
        break;
    }
    return state;
  },
};
