import { parseStream } from '../events/envelope.ts';
import type { Projection } from './projection.ts';

/** The session each lane's next turn resumes, by computer then lane. */
export const laneSessionsProjection: Projection<Record<string, Record<string, string>>> = {
  name: 'lane-sessions',
  // 2: adoptions bind sessions to lanes.
  version: 2,
  initial: () => ({}),
  evolve(state, event) {
    // An adoption binds a live session to a lane on the computer it lives on: its next turn resumes it.
    if (event.type === 'adoption.adopted') {
      (state[event.data.computerId] ??= {})[event.data.lane] = event.data.sessionId;
      return state;
    }
    if (event.type !== 'lane.session.remembered' && event.type !== 'lane.session.forgotten') return state;
    const owner = parseStream(event.stream).owner ?? '';
    const lanes = (state[owner] ??= {});
    if (event.type === 'lane.session.remembered') lanes[event.data.lane] = event.data.sessionId;
    else if (lanes[event.data.lane] === event.data.sessionId) delete lanes[event.data.lane];
    return state;
  },
};
