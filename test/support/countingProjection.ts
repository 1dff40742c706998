import type { Projection } from '../../projections/projection.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { bumped } from './events.ts';

export interface Tally {
  events: number;
  lastSeq: number;
}

/** Counts the events it folds, in its state and (to see what a fold really did) outside it too. */
export function countingProjection(version = 1, name = 'tally'): Projection<Tally> & { evolved: number } {
  const projection = {
    name,
    version,
    evolved: 0,
    initial: (): Tally => ({ events: 0, lastSeq: 0 }),
    evolve(state: Tally, event: { seq: number }): Tally {
      projection.evolved++;
      state.events++;
      state.lastSeq = event.seq;
      return state;
    },
  };
  return projection;
}

/** `count` counter bumps, one append each. */
export async function appendBumps(store: EventStore, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await store.append({ expected: { 'counter:a': 'any' }, events: [bumped('counter:a', i)] });
}
