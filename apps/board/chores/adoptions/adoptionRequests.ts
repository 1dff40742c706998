import { adoptionDecider, hasOpenRequest } from '../../../../actors/board/adoption/adoptionDecider.ts';
import { readLane } from '../../../../actors/board/adoption/laneStream.ts';
import type { Clock } from '../../../../runtime/actors/clock.ts';
import { decideAndAppend, onlyStreamsRead } from '../../../../runtime/actors/decideAndAppend.ts';
import { retryOnConflict } from '../../../../runtime/actors/retryOnConflict.ts';
import type { EventStore } from '../../../../runtime/store/eventStore.ts';

/**
 * `runledger adopt LANE SESSION`: asks the board to bind the session to the lane. The request is the
 * lane's latest answer from now on (an earlier open one is superseded); a round acts on it. Resolves
 * with its ordinal in the lane.
 */
export function requestAdoption(store: EventStore, clock: Clock, lane: string, sessionId: string): Promise<number> {
  return retryOnConflict(async () => {
    const { state, versions } = await readLane(store, lane);
    // The state is folded in place by the step: its ordinal is read before.
    const request = state.requests + 1;
    const outcome = await decideAndAppend(
      store,
      adoptionDecider,
      state,
      { stream: `lane:${lane}`, type: 'adoption.requested', data: { lane, sessionId }, at: clock.now() },
      versions,
      onlyStreamsRead,
    );
    return outcome.ok ? request : outcome.conflict;
  }, keptChanging(lane));
}

/** `runledger adopt LANE --release`: withdraws the lane's open request. Refused when none is open. */
export function releaseAdoption(store: EventStore, clock: Clock, lane: string, reason: string): Promise<void> {
  return retryOnConflict(async () => {
    const { state, versions } = await readLane(store, lane);
    if (!hasOpenRequest(state)) throw new Error(`lane ${lane} has no open adoption request to release`);
    const outcome = await decideAndAppend(
      store,
      adoptionDecider,
      state,
      { stream: `lane:${lane}`, type: 'adoption.released', data: { lane, reason }, at: clock.now() },
      versions,
      onlyStreamsRead,
    );
    return outcome.ok ? undefined : outcome.conflict;
  }, keptChanging(lane));
}

const keptChanging = (lane: string) => () => new Error(`lane ${lane} kept changing; try again`);
