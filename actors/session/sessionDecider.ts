import { parseStream } from '../../events/envelope.ts';
import { sessionEvents } from '../../events/sessionEvents.ts';
import { decider } from '../decider.ts';
import { decideSession, ignoresSession, SESSION_INPUTS, type SessionDecision, type SessionInput } from './decideSession.ts';
import { evolveSession } from './evolveSession.ts';
import { initialSessionClose, type SessionClose } from './sessionState.ts';

/** One session on its computer: the close of it, once a run in it ended. One state per session stream. */
export const sessionDecider = decider<SessionClose, SessionInput, SessionDecision>({
  name: 'session',
  inputs: SESSION_INPUTS,
  scopeOf(event) {
    if (!Object.hasOwn(sessionEvents, event.type)) return null;
    const { owner, kind } = parseStream(event.stream);
    return owner !== null && kind === 'session' ? event.stream : null;
  },
  initialState: initialSessionClose,
  decide: decideSession,
  ignores: ignoresSession,
  evolve: evolveSession,
});
