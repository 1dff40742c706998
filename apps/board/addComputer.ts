import { requestAnswer } from '../../actors/board/boardAnswers.ts';
import { boardDecider } from '../../actors/board/boardDecider.ts';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { hashToken, newToken } from '../../adapters/http/tokens.ts';
import { boardProjection } from '../../projections/board.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import { decideAppend } from '../../runtime/actors/decideAndAppend.ts';
import { retryOnConflict } from '../../runtime/actors/retryOnConflict.ts';
import { hydrateStates } from '../../runtime/folds/hydrate.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';

/**
 * Registers a computer on the board of this log and returns its token, which exists only in this
 * answer (the log keeps its hash). Decided against the board's state folded from the log, so it works
 * whether or not a board is running, in this process or another: the board sees an append its actor
 * did not make and rehydrates.
 */
export function addComputer(store: EventStore, clock: Clock, computerId: string, token = newToken()): Promise<{ token: string }> {
  const stream = `computer:${computerId}`;
  return retryOnConflict(
    async () => {
      // Read before the fold: a registration appended meanwhile then makes this append stale.
      const seen = await store.streamVersion(stream);
      const [state] = await hydrateStates(store, [boardProjection]);
      const input = boardInput.computerAdded(computerId, hashToken(token), clock.now());
      const decided = (await decideAppend(boardDecider, state, input, new Map([[stream, seen]]), (other) => store.streamVersion(other)))!;
      // A refused registration is an answer, not a fact: nothing of it is recorded.
      const answer = requestAnswer(decided.decisions);
      if (answer && 'code' in answer) throw new Error(`computer ${computerId}: ${answer.reason}`);
      const result = await store.append({ expected: decided.expected, events: decided.events });
      return result.ok ? { token } : result.conflict;
    },
    () => new Error(`computer ${computerId}: the board kept changing while it was being added; try again`),
  );
}
