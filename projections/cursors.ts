import type { TypesOutside } from '../events/catalog.ts';
import { parseStream } from '../events/envelope.ts';
import { ignoreRest } from '../events/exhaustive.ts';
import type { Projection } from './projection.ts';

export interface CursorsState {
  /** Per outbox consumer: every effect up to this seq has been taken. */
  outbox: Record<string, number>;
  /** The hooks cursor: every event up to this seq was taken for its hooks (`outbox.taken` in `outbox:hooks`). */
  hooks: number;
  /** Per subscription: every event it hears up to this seq was filed in its session's inbox. */
  notices: Record<string, number>;
}

/** Every cursor, each moved by an event of the log, so a rebuild recomputes them. */
export const cursorsProjection: Projection<CursorsState> = {
  name: 'cursors',
  version: 2,
  initial: () => ({ outbox: {}, hooks: 0, notices: {} }),
  evolve(state, event) {
    switch (event.type) {
      case 'outbox.taken': {
        const consumer = parseStream(event.stream).id;
        state.outbox[consumer] = event.data.through;
        if (consumer === 'hooks') state.hooks = Math.max(state.hooks, event.data.through);
        break;
      }
      case 'subscription.opened':
        state.notices[event.data.subscriptionId] ??= event.data.from;
        break;
      case 'notice.filed':
        state.notices[event.data.subscriptionId] = Math.max(state.notices[event.data.subscriptionId] ?? 0, event.data.source);
        break;
      case 'subscription.closed':
        delete state.notices[event.data.subscriptionId];
        break;
      // An effect performed or interrupted moves no cursor; nor do an inbox's readings and answers.
      case 'outbox.performed':
      case 'outbox.interrupted':
      case 'inbox.read':
      case 'notices.handed':
      case 'inbox.waiting':
      case 'inbox.withheld':
        break;
      default:
        ignoreRest<TypesOutside<'outbox' | 'notification'>>(event);
        break;
    }
    return state;
  },
};
