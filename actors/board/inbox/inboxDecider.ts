import type { DomainEvent, EventData, EventType, NewEventOf, TypesOutside } from '../../../events/catalog.ts';
import { type NewEvent, parseStream } from '../../../events/envelope.ts';
import { exhausted, ignoreRest } from '../../../events/exhaustive.ts';
import type { NotificationReason } from '../../../events/notificationReasons.ts';
import { decider } from '../../decider.ts';
import { type InboxState, initialInboxState } from './inboxState.ts';
import { type NoticeSource, noticeText } from './noticeKinds.ts';

/** What a session's inbox is told: its subscriptions opened and closed, a round's reading, the notices handed to it. */
const INPUTS = ['subscription.opened', 'subscription.closed', 'inbox.read', 'notices.handed'] as const satisfies readonly EventType[];
export type InboxInput = NewEventOf<(typeof INPUTS)[number]>;

type DecisionType = 'notice.filed' | 'inbox.waiting' | 'inbox.withheld';
export type InboxDecision = NewEventOf<DecisionType>;
type Decision = InboxDecision;
const INBOX_TYPES = new Set<string>([...INPUTS, 'notice.filed', 'inbox.waiting', 'inbox.withheld'] satisfies EventType[]);

/**
 * A session's notifications (docs/rules.md#sessions-hooks-notifications, "Hooks and notifications"). A round reads what the
 * session's subscriptions hear past their cursors, with the board's record of the session and, when
 * that record does not say it is live, a reading of its liveness; the notices are filed in order,
 * each moving its subscription's cursor past its event in the same append. A session recorded ended
 * that does not read running, or one whose liveness cannot be read, is filed nothing: its cursors stay
 * and the board says why, once.
 */
export const inboxDecider = decider<InboxState, InboxInput, InboxDecision>({
  name: 'inbox',
  inputs: INPUTS,
  scopeOf(event) {
    if (!INBOX_TYPES.has(event.type)) return null;
    const { owner, kind, id } = parseStream(event.stream);
    return owner === null && kind === 'inbox' ? id : null;
  },
  initialState: initialInboxState,
  decide: decideInbox,
  ignores(state, input) {
    switch (input.type) {
      case 'inbox.read':
        return decideInbox(state, input).length === 0;
      case 'notices.handed':
        return input.data.through <= state.handed;
      case 'subscription.opened':
        return Object.hasOwn(state.subscriptions, input.data.subscriptionId);
      case 'subscription.closed':
        return state.subscriptions[input.data.subscriptionId]?.closed !== false;
      default:
        return exhausted(input, false);
    }
  },
  evolve: evolveInbox,
});

/** Only a reading files notices; a subscription opened or closed, or notices handed, is its own answer once folded. */
export function decideInbox(state: InboxState, input: InboxInput): Decision[] {
  if (input.type !== 'inbox.read') return [];
  const { at } = input;
  const { sessionId } = state;
  const due = dueNotices(state, input.data.heard);
  if (due.length === 0) return [];
  const on = <T extends DecisionType>(type: T, data: EventData<T>): NewEvent<T, EventData<T>> => ({ stream: input.stream, type, data, at });
  const held = whyHeld(sessionId, input.data, due.length);
  if (held === null) return due.map((heard, i) => on('notice.filed', { ...heard, sessionId, n: state.filed + i + 1, text: noticeText(heard) }));
  return state.said === held.kind ? [] : [on(held.kind === 'waiting' ? 'inbox.waiting' : 'inbox.withheld', { sessionId, reason: held.reason })];
}

/**
 * Why a reading files nothing, or null when it files: a session the board does not record live is
 * filed only when it is read running; one whose liveness could not be read waits for a reading.
 */
export function whyHeld(
  sessionId: string,
  { record, liveness, detail }: Pick<EventData<'inbox.read'>, 'record' | 'liveness' | 'detail'>,
  notices: number,
): { kind: 'waiting' | 'withheld'; reason: NotificationReason } | null {
  if (record === 'live' || liveness === 'running') return null;
  if (liveness === null || liveness === 'unreadable') {
    return { kind: 'waiting', reason: { code: 'liveness.unreadable', session: sessionId, detail, notices } };
  }
  return { kind: 'withheld', reason: { code: 'not.running', session: sessionId, record, liveness, notices } };
}

/** What the reading heard that this inbox still has to file: for open subscriptions, past their cursors, in order. */
function dueNotices(state: InboxState, heard: EventData<'inbox.read'>['heard']): NoticeSource[] {
  const cursors = new Map<string, number>();
  const due: NoticeSource[] = [];
  for (const notice of [...heard].sort((a, b) => a.source - b.source)) {
    const subscription = state.subscriptions[notice.subscriptionId];
    if (!subscription || subscription.closed) continue;
    const cursor = cursors.get(notice.subscriptionId) ?? subscription.cursor;
    if (notice.source <= cursor) continue;
    cursors.set(notice.subscriptionId, notice.source);
    due.push(notice);
  }
  return due;
}

export function evolveInbox(state: InboxState, event: DomainEvent): InboxState {
  switch (event.type) {
    case 'subscription.opened': {
      const { subscriptionId, lane, kinds, from } = event.data;
      state.subscriptions[subscriptionId] ??= { lane, kinds, cursor: from, closed: false };
      break;
    }
    case 'subscription.closed': {
      const subscription = state.subscriptions[event.data.subscriptionId];
      if (subscription) subscription.closed = true;
      break;
    }
    case 'notice.filed': {
      const subscription = state.subscriptions[event.data.subscriptionId];
      if (subscription) subscription.cursor = Math.max(subscription.cursor, event.data.source);
      state.filed = Math.max(state.filed, event.data.n);
      state.pending.push({ n: event.data.n, text: event.data.text, sourceAt: event.data.sourceAt });
      state.said = null;
      break;
    }
    case 'inbox.waiting':
      state.said = 'waiting';
      break;
    case 'inbox.withheld':
      state.said = 'withheld';
      break;
    case 'notices.handed': {
      const { through } = event.data;
      state.handed = Math.max(state.handed, through);
      state.pending = state.pending.filter((notice) => notice.n > through);
      break;
    }
    case 'inbox.read':
      // A reading: what it found is in the notices filed from it.
      break;
    default:
      ignoreRest<TypesOutside<'notification'>>(event);
      break;
  }
  return state;
}
