import type { EventStore } from '../../../events/store/eventStore.ts';
import { boardProjection } from '../../../projections/board.ts';
import { hydrateStates } from '../../../projections/hydrate.ts';
import { hashToken, newToken } from '../../../wire/tokens.ts';
import type { Clock } from '../../runtime/clock.ts';
import { decideAppend } from '../../runtime/decideAndAppend.ts';
import { retryOnConflict } from '../../runtime/retryOnConflict.ts';
import { requestAnswer } from '../boardAnswers.ts';
import { boardDecider } from '../boardDecider.ts';
import { boardInput } from '../boardInputs.ts';

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
