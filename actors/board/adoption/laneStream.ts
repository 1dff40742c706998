import type { EventStore } from '../../../runtime/store/eventStore.ts';
import { adoptionDecider } from './adoptionDecider.ts';
import type { AdoptionState } from './adoptionState.ts';

/** The lane's adoptions as its own stream has them now, and the version to append at. */
export async function readLane(store: EventStore, lane: string): Promise<{ state: AdoptionState; versions: Map<string, number> }> {
  const stream = `lane:${lane}`;
  let state = adoptionDecider.initialState(lane);
  let version = 0;
  for (const event of await store.readStream(stream)) {
    state = adoptionDecider.evolve(state, event);
    version = event.version;
  }
  return { state, versions: new Map([[stream, version]]) };
}
