import { adoptionDecider } from '../actors/board/adoption/adoptionDecider.ts';
import type { AdoptionState } from '../actors/board/adoption/adoptionState.ts';
import type { Projection } from './projection.ts';

/** Every lane's adoptions, by lane: where a round finds the requests it may act on, and which session a lane adopted. */
export const adoptionsProjection: Projection<Record<string, AdoptionState>> = {
  name: 'adoptions',
  version: 1,
  initial: () => ({}),
  evolve(state, event) {
    const lane = adoptionDecider.scopeOf(event);
    if (lane === null) return state;
    state[lane] = adoptionDecider.evolve(state[lane] ?? adoptionDecider.initialState(lane), event);
    return state;
  },
};
