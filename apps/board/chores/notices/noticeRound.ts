import { inboxDecider, whyHeld } from '../../../../actors/board/inbox/inboxDecider.ts';
import { inboxStream, readInbox } from '../../../../actors/board/inbox/inboxStream.ts';
import type { NoticeSource } from '../../../../actors/board/inbox/noticeKinds.ts';
import type { EventData, NewDomainEvent } from '../../../../events/catalog.ts';
import { wordNotificationReason } from '../../../../events/notificationReasons.ts';
import { messageOf } from '../../../../events/thrown.ts';
import type { NoticesIndex } from '../../../../projections/notices.ts';
import type { Clock } from '../../../../runtime/actors/clock.ts';
import { decideAndAppend, onlyStreamsRead } from '../../../../runtime/actors/decideAndAppend.ts';
import type { EventStore } from '../../../../runtime/store/eventStore.ts';

/** A session's liveness, read by whatever runs it (its driver); throws when it cannot be read. */
export interface LivenessReader {
  read(sessionId: string): Promise<'running' | 'stopped' | 'gone'>;
}

/** A board with no session drivers cannot read any session's liveness: what only a reading would allow waits. */
export const unreadableLiveness: LivenessReader = {
  read: async () => {
    throw new Error('no session driver on this board can read it');
  },
};

/** A session that missed a lot is told it over several rounds, oldest first: one reading stays small. */
export const MAX_NOTICES_PER_READING = 200;

export interface NoticeRoundOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly liveness: LivenessReader;
}

export interface NoticeReport {
  filed: [sessionId: string, notices: number][];
  /** Notices that wait, and why (said in the log once per wait, here every round). */
  waiting: [sessionId: string, reason: string][];
  /** Inboxes another process wrote to first, or whose filing failed: tried again next round. */
  skipped: [sessionId: string, reason: string][];
}

/**
 * One round's notifications: for each session whose subscriptions hear something past their cursors
 * (the `notices` index), its inbox is read again and the filing decided at the inbox's version, so a
 * notice is filed once however many rounds race for it; a filing that fails writes nothing and moves
 * no cursor, and the next round files it.
 */
export async function fileNotices(options: NoticeRoundOptions, index: NoticesIndex): Promise<NoticeReport> {
  const report: NoticeReport = { filed: [], waiting: [], skipped: [] };
  const bySession = new Map<string, NoticeSource[]>();
  for (const [subscriptionId, due] of Object.entries(index.due)) {
    const subscription = index.subscriptions[subscriptionId];
    if (!subscription || due.length === 0) continue;
    const list = bySession.get(subscription.sessionId) ?? [];
    list.push(...due);
    bySession.set(subscription.sessionId, list);
  }
  // Sessions in the order of the oldest notice each heard, and each one's notices oldest first: not
  // in the index's key order, which puts ids made of digits alone (a random id, now and then) first.
  const oldestFirst = [...bySession].map(
    ([sessionId, heard]) =>
      [
        sessionId,
        heard.sort((a, b) => a.source - b.source || (a.subscriptionId < b.subscriptionId ? -1 : a.subscriptionId > b.subscriptionId ? 1 : 0)),
      ] as const,
  );
  oldestFirst.sort(([a, heardA], [b, heardB]) => heardA[0]!.source - heardB[0]!.source || (a < b ? -1 : a > b ? 1 : 0));
  for (const [sessionId, heard] of oldestFirst) {
    try {
      await fileFor(options, sessionId, heard, index.sessions[sessionId] ?? 'unknown', report);
    } catch (error) {
      report.skipped.push([sessionId, `filing failed: ${messageOf(error)}`]);
    }
  }
  return report;
}

async function fileFor(
  options: NoticeRoundOptions,
  sessionId: string,
  heard: NoticeSource[],
  record: EventData<'inbox.read'>['record'],
  report: NoticeReport,
): Promise<void> {
  const { store, clock } = options;
  const { state, versions } = await readInbox(store, sessionId);
  const due = heard
    .filter((notice) => {
      const subscription = state.subscriptions[notice.subscriptionId];
      return subscription !== undefined && !subscription.closed && notice.source > subscription.cursor;
    })
    .slice(0, MAX_NOTICES_PER_READING);
  if (due.length === 0) return;
  let liveness: EventData<'inbox.read'>['liveness'] = null;
  let detail: string | null = null;
  if (record !== 'live') {
    try {
      liveness = await options.liveness.read(sessionId);
    } catch (error) {
      liveness = 'unreadable';
      detail = messageOf(error).slice(0, 500);
    }
  }
  const input: NewDomainEvent = {
    stream: inboxStream(sessionId),
    type: 'inbox.read',
    data: { sessionId, record, liveness, detail, heard: due },
    at: clock.now(),
  };
  const outcome = await decideAndAppend(store, inboxDecider, state, input, versions, onlyStreamsRead);
  if (!outcome.ok) {
    report.skipped.push([sessionId, 'another process wrote to its inbox first']);
    return;
  }
  const filed = outcome.decisions.filter((d) => d.type === 'notice.filed').length;
  if (filed > 0) {
    report.filed.push([sessionId, filed]);
    return;
  }
  // Nothing filed: it waits. Said in the log once; said in every round's report.
  const held = whyHeld(sessionId, { record, liveness, detail }, due.length);
  if (held) report.waiting.push([sessionId, wordNotificationReason(held.reason)]);
}
