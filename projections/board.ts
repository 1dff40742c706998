import { boardDecider } from '../actors/board/boardDecider.ts';
import type { BoardState } from '../actors/board/boardState.ts';
import type { Projection } from './projection.ts';

/** The board's runs, lanes and computers (docs/rules.md#wire-and-cli): what `GET /v1/runs/{id}` and the lease monitor read. */
export const boardProjection: Projection<BoardState> = {
  name: 'board',
  // 2: an adoption moves its lane to the session's computer. 3: runs pushed and unclaimed, per computer.
  // 4: a claim's incarnation, draining computers, when each computer connected and was last seen.
  // 5: a terminal run keeps neither its prompt (unless keyed) nor its reply.
  // 6: a terminal run leaves the state (issue 16); idempotency keys keep their run's body; settled counts.
  // 7: one offer at a time: a lane's offer, each computer's offers and the claims it holds.
  // 8: the repositories each computer announced, and who has each.
  version: 8,
  initial: () => boardDecider.initialState('board'),
  evolve(state, event) {
    return boardDecider.scopeOf(event) === null ? state : boardDecider.evolve(state, event);
  },
};
