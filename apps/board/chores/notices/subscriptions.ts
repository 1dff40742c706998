import { randomUUID } from 'node:crypto';
import { inboxDecider } from '../../../../actors/board/inbox/inboxDecider.ts';
import { inboxStream, readInbox } from '../../../../actors/board/inbox/inboxStream.ts';
import type { NoticeKind } from '../../../../actors/board/inbox/noticeKinds.ts';
import type { Clock } from '../../../../runtime/actors/clock.ts';
import { decideAndAppend, onlyStreamsRead } from '../../../../runtime/actors/decideAndAppend.ts';
import { retryOnConflict } from '../../../../runtime/actors/retryOnConflict.ts';
import type { EventStore } from '../../../../runtime/store/eventStore.ts';

export interface SubscriptionRequest {
  readonly sessionId: string;
  /** Runs of this lane only; none for every lane. */
  readonly lane?: string | null;
  readonly kinds: readonly NoticeKind[];
  /** Drawn when not given. */
  readonly subscriptionId?: string;
}

/**
 * Opens a subscription in the session's inbox. It hears what is committed after it opened (its cursor
 * starts at the log's head), never history. Refused when the inbox already has one of that id.
 */
export function openSubscription(store: EventStore, clock: Clock, request: SubscriptionRequest): Promise<{ subscriptionId: string; from: number }> {
  const subscriptionId = request.subscriptionId ?? randomUUID().slice(0, 8);
  const { sessionId } = request;
  return retryOnConflict(async () => {
    const { state, versions } = await readInbox(store, sessionId);
    if (Object.hasOwn(state.subscriptions, subscriptionId)) throw new Error(`session ${sessionId} already has a subscription ${subscriptionId}`);
    const from = await store.headSeq();
    const outcome = await decideAndAppend(
      store,
      inboxDecider,
      state,
      {
        stream: inboxStream(sessionId),
        type: 'subscription.opened',
        data: { subscriptionId, sessionId, lane: request.lane ?? null, kinds: [...request.kinds], from },
        at: clock.now(),
      },
      versions,
      onlyStreamsRead,
    );
    return outcome.ok ? { subscriptionId, from } : outcome.conflict;
  }, keptChanging(sessionId));
}

/** Closes a subscription: nothing more is filed for it. Refused when the inbox has no open one of that id. */
export function closeSubscription(store: EventStore, clock: Clock, sessionId: string, subscriptionId: string, reason: string): Promise<void> {
  return retryOnConflict(async () => {
    const { state, versions } = await readInbox(store, sessionId);
    if (state.subscriptions[subscriptionId]?.closed !== false) throw new Error(`session ${sessionId} has no open subscription ${subscriptionId}`);
    const outcome = await decideAndAppend(
      store,
      inboxDecider,
      state,
      { stream: inboxStream(sessionId), type: 'subscription.closed', data: { subscriptionId, sessionId, reason }, at: clock.now() },
      versions,
      onlyStreamsRead,
    );
    return outcome.ok ? undefined : outcome.conflict;
  }, keptChanging(sessionId));
}

const keptChanging = (sessionId: string) => () => new Error(`the inbox of session ${sessionId} kept changing; try again`);
