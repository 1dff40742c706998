import type { BoardComputer, BoardLane, BoardRun, BoardState } from './boardState.ts';

/**
 * A copy of the board's state that shares nothing `evolveBoard` changes in place: every record and
 * list it writes to is copied, the strings and numbers in them are not. What a board keeps beside the
 * state it folds ahead (the state as committed, see DecidingActor), copied at each refold: with two
 * boards refusing each other that is often, and `structuredClone` took 30 ms a copy at 2,000 runs.
 * A field that holds a record or a list must be copied here too (copyBoardState.test.ts folds random
 * histories on the original and checks the copy never moves).
 */
export function copyBoardState(state: BoardState): BoardState {
  const runs: Record<string, BoardRun> = {};
  for (const id in state.runs) {
    const run = state.runs[id]!;
    runs[id] = { ...run, offeredTo: [...run.offeredTo] };
  }
  const lanes: Record<string, BoardLane> = {};
  for (const id in state.lanes) {
    const lane = state.lanes[id]!;
    lanes[id] = { ...lane, unclaimed: [...lane.unclaimed], waiters: [...lane.waiters] };
  }
  const computers: Record<string, BoardComputer> = {};
  for (const id in state.computers) computers[id] = { ...state.computers[id]! };
  return {
    ...state,
    runs,
    lanes,
    waiting: { ...state.waiting },
    open: { ...state.open },
    idempotency: { ...state.idempotency },
    settled: { ...state.settled },
    computers,
    connected: [...state.connected],
    draining: { ...state.draining },
    pushed: { ...state.pushed },
    holding: { ...state.holding },
    offeredLanes: { ...state.offeredLanes },
    unoffered: [...state.unoffered],
    repoHolders: { ...state.repoHolders },
  };
}
