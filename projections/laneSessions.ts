import type { EventType } from '../events/catalog.ts';
import { parseStream } from '../events/envelope.ts';
import { ignoreRest } from '../events/exhaustive.ts';
import type { Projection } from './projection.ts';

/** The session each lane's next turn resumes, by computer then lane. */
export const laneSessionsProjection: Projection<Record<string, Record<string, string>>> = {
  name: 'lane-sessions',
  // 2: adoptions bind sessions to lanes.
  version: 2,
  initial: () => ({}),
  evolve(state, event) {
    switch (event.type) {
      case 'adoption.adopted':
        // An adoption binds a live session to a lane on the computer it lives on: its next turn resumes it.
        (state[event.data.computerId] ??= {})[event.data.lane] = event.data.sessionId;
        break;
      case 'lane.session.remembered':
        lanesOf(state, event.stream)[event.data.lane] = event.data.sessionId;
        break;
      case 'lane.session.forgotten': {
        const lanes = lanesOf(state, event.stream);
        if (lanes[event.data.lane] === event.data.sessionId) delete lanes[event.data.lane];
        break;
      }
      default:
        ignoreRest<Exclude<EventType, Read>>(event);
        break;
    }
    return state;
  },
};

/** The types this fold reads: a lane's session memory and an adoption's outcome. */
type Read = 'adoption.adopted' | 'lane.session.remembered' | 'lane.session.forgotten';

/** The lanes of the computer whose run wrote `stream` (`c1/run:r1`). */
function lanesOf(state: Record<string, Record<string, string>>, stream: string): Record<string, string> {
  return (state[parseStream(stream).owner ?? ''] ??= {});
}
