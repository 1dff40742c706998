import { parseStream } from '../events/envelope.ts';
import type { Projection } from './projection.ts';

export interface CursorsState {
  /** Per outbox consumer: every effect up to this seq has been taken. */
  outbox: Record<string, number>;
}

/** Every cursor, each moved by an event of the log, so a rebuild recomputes them. */
export const cursorsProjection: Projection<CursorsState> = {
  name: 'cursors',
  version: 1,
  initial: () => ({ outbox: {} }),
  evolve(state, event) {
    if (event.type === 'outbox.taken') state.outbox[parseStream(event.stream).id] = event.data.through;
    return state;
  },
};
