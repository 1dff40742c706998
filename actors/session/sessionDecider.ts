import { parseStream } from '../../events/envelope.ts';
import { sessionEvents } from '../../events/sessionEvents.ts';
import type { Decider } from '../runtime/decider.ts';
import { decideSession, ignoresSession } from './decideSession.ts';
import { evolveSession } from './evolveSession.ts';
import { type SessionClose, initialSessionClose } from './sessionState.ts';

const INPUTS = new Set(['session.run.ended', 'session.close.due', 'session.read', 'session.kill.answered']);

/** One session on its computer: the close of it, once a run in it ended. One state per session stream. */
export const sessionDecider: Decider<SessionClose> = {
  name: 'session',
  scopeOf(event) {
    if (!Object.hasOwn(sessionEvents, event.type)) return null;
    const { owner, kind } = parseStream(event.stream);
    return owner !== null && kind === 'session' ? event.stream : null;
  },
  isInput: (event) => INPUTS.has(event.type),
  initialState: initialSessionClose,
  decide: decideSession,
  ignores: ignoresSession,
  evolve: evolveSession,
};
