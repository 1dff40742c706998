import { parseStream } from '../events/envelope.ts';
import type { Projection } from './projection.ts';

/** The session each lane's next turn resumes, by computer then lane. */
export const laneSessionsProjection: Projection<Record<string, Record<string, string>>> = {
  name: 'lane-sessions',
  version: 1,
  initial: () => ({}),
  evolve(state, event) {
    if (event.type !== 'lane.session.remembered' && event.type !== 'lane.session.forgotten') return state;
    const owner = parseStream(event.stream).owner ?? '';
    const lanes = (state[owner] ??= {});
    if (event.type === 'lane.session.remembered') lanes[event.data.lane] = event.data.sessionId;
    else if (lanes[event.data.lane] === event.data.sessionId) delete lanes[event.data.lane];
    return state;
  },
};
