import { type Heard, heardOf, hears, type LaneBook, type NoticeKind, type NoticeSource } from '../actors/board/inbox/noticeKinds.ts';
import type { DomainEvent, TypesWhere } from '../events/catalog.ts';
import { ignoreRest } from '../events/exhaustive.ts';
import type { Projection } from './projection.ts';

export interface IndexedSubscription {
  readonly sessionId: string;
  readonly lane: string | null;
  readonly kinds: readonly NoticeKind[];
  /** Its notification cursor: everything it hears up to here is filed. */
  cursor: number;
}

/**
 * Where a round finds the notices to file: each open subscription with what it hears past its cursor,
 * in order, and the board's record of every session (live, or ended by a confirmed close). It also
 * keeps the lanes a notice needs: of runs not yet ended, and of sessions.
 */
export interface NoticesIndex extends LaneBook {
  subscriptions: Record<string, IndexedSubscription>;
  due: Record<string, NoticeSource[]>;
  sessions: Record<string, 'live' | 'ended'>;
}

export const noticesProjection: Projection<NoticesIndex> = {
  name: 'notices',
  version: 1,
  initial: () => ({ subscriptions: {}, due: {}, sessions: {}, runLanes: {}, sessionLanes: {} }),
  evolve: evolveNotices,
};

function evolveNotices(state: NoticesIndex, event: DomainEvent): NoticesIndex {
  switch (event.type) {
    case 'subscription.opened': {
      const { subscriptionId, sessionId, lane, kinds, from } = event.data;
      if (!state.subscriptions[subscriptionId]) {
        state.subscriptions[subscriptionId] = { sessionId, lane, kinds, cursor: from };
        state.due[subscriptionId] = [];
      }
      return state;
    }
    case 'subscription.closed':
      delete state.subscriptions[event.data.subscriptionId];
      delete state.due[event.data.subscriptionId];
      return state;
    case 'notice.filed': {
      const { subscriptionId, source } = event.data;
      const subscription = state.subscriptions[subscriptionId];
      if (subscription) subscription.cursor = Math.max(subscription.cursor, source);
      const due = state.due[subscriptionId];
      if (due) state.due[subscriptionId] = due.filter((notice) => notice.source > source);
      return state;
    }
    case 'board.run.queued':
      state.runLanes[event.data.runId] = event.data.lane;
      break;
    case 'session.run.ended':
      if (event.data.lane) state.sessionLanes[event.data.sessionId] = event.data.lane;
      break;
    case 'run.session.announced':
    case 'lane.session.remembered':
    case 'adoption.adopted':
      state.sessions[event.data.sessionId] = 'live';
      break;
    case 'session.closed':
      state.sessions[event.data.sessionId] = 'ended';
      break;
    case 'session.read':
      // Read running again after its close: the board's record has it live once more.
      if (event.data.activity?.presence === 'running' && state.sessions[event.data.sessionId] === 'ended')
        state.sessions[event.data.sessionId] = 'live';
      break;
    case 'board.run.finished':
    case 'board.run.resolved':
    case 'board.run.cancelled':
      hear(state, event);
      // A run that ended needs its lane no more (a subscription heard its end just now).
      delete state.runLanes[event.data.runId];
      return state;
    case 'board.run.claimed':
    case 'board.run.running':
    case 'board.computer.online':
    case 'board.computer.offline':
      // Heard only, below.
      break;
    default:
      // What no subscription hears and the index does not read (the types it reads are named above).
      ignoreRest<TypesWhere<'notice', null>>(event);
      return state;
  }
  hear(state, event);
  return state;
}

/** Files what subscriptions hear of the event (see `heardOf`) as due to each. */
function hear(state: NoticesIndex, event: DomainEvent): void {
  const heard = heardOf(event, state);
  if (heard) hearIt(state, heard);
}

function hearIt(state: NoticesIndex, heard: Heard): void {
  for (const [subscriptionId, subscription] of Object.entries(state.subscriptions)) {
    if (heard.source <= subscription.cursor || !hears(subscription, heard)) continue;
    state.due[subscriptionId]!.push({ subscriptionId, ...heard });
  }
}
