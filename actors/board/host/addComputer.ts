import type { Clock } from '../../runtime/clock.ts';
import type { EventStore } from '../../../events/store/eventStore.ts';
import { hydrateStates } from '../../../projections/hydrate.ts';
import { boardProjection } from '../../../projections/board.ts';
import { requestAnswer } from '../boardAnswers.ts';
import { boardDecider } from '../boardDecider.ts';
import { boardInput } from '../boardInputs.ts';
import { decideStep } from '../../runtime/decideStep.ts';
import { hashToken, newToken } from '../../../wire/tokens.ts';

/**
 * Registers a computer on the board of this log and returns its token, which exists only in this
 * answer (the log keeps its hash). Decided against the board's state folded from the log, so it works
 * whether or not a board is running, in this process or another: the board sees an append its actor
 * did not make and rehydrates.
 */
export async function addComputer(store: EventStore, clock: Clock, computerId: string, token = newToken()): Promise<{ token: string }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    // Read before the fold: a registration appended meanwhile then makes this append stale.
    const seen = await store.streamVersion(`computer:${computerId}`);
    const [state] = await hydrateStates(store, [boardProjection]);
    const input = boardInput.computerAdded(computerId, hashToken(token), clock.now());
    const step = decideStep(boardDecider, state, input)!;
    const answer = requestAnswer(step.decisions);
    if (answer && 'code' in answer) throw new Error(`computer ${computerId}: ${answer.reason}`);
    const events = [input, ...step.decisions.map((d) => ({ ...d, cause: { inBatch: 0 } }))];
    const expected: Record<string, number> = {};
    for (const event of events) expected[event.stream] = event.stream === `computer:${computerId}` ? seen : await store.streamVersion(event.stream);
    const result = await store.append({ expected, events });
    if (result.ok) return { token };
  }
  throw new Error(`computer ${computerId}: the board kept changing while it was being added; try again`);
}
