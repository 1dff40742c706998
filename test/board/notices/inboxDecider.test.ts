import { describe, expect, it } from 'vitest';
import type { InboxDecision, InboxInput } from '../../../actors/board/inbox/inboxDecider.ts';
import { inboxDecider } from '../../../actors/board/inbox/inboxDecider.ts';
import { initialInboxState } from '../../../actors/board/inbox/inboxState.ts';
import type { NoticeSource } from '../../../actors/board/inbox/noticeKinds.ts';
import { noticePrefix } from '../../../apps/computer/unreadNotices.ts';
import type { EventData, NewEventOf } from '../../../events/catalog.ts';
import { wordNotificationReason } from '../../../events/notificationReasons.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';
import { T0 } from '../../support/events.ts';

const stream = 'inbox:S1';
/** The first decision's reason, in the words the audit shows. */
const reasonOf = (decisions: readonly InboxDecision[] | null) => {
  const first = decisions![0]!;
  return first.type === 'notice.filed' ? null : wordNotificationReason(first.data.reason);
};
const at = (s: number) => T0 + s * 1000;

const ended = (source: number, runId = `r${source}`, state = 'succeeded', subscriptionId = 'sub1'): NoticeSource => ({
  subscriptionId,
  source,
  kind: 'run.ended',
  runId,
  lane: 'L',
  computerId: 'c1',
  state,
  sourceAt: at(source),
});

type Read = EventData<'inbox.read'>;
const input = {
  opened: (subscriptionId = 'sub1', from = 10): NewEventOf<'subscription.opened'> => ({
    stream,
    type: 'subscription.opened',
    data: { subscriptionId, sessionId: 'S1', lane: 'L', kinds: ['run.ended'], from },
    at: at(0),
  }),
  closed: (subscriptionId = 'sub1'): NewEventOf<'subscription.closed'> => ({
    stream,
    type: 'subscription.closed',
    data: { subscriptionId, sessionId: 'S1', reason: 'asked by its user' },
    at: at(1),
  }),
  read: (
    s: number,
    heard: NoticeSource[],
    record: Read['record'] = 'live',
    liveness: Read['liveness'] = null,
    detail: string | null = null,
  ): NewEventOf<'inbox.read'> => ({
    stream,
    type: 'inbox.read',
    data: { sessionId: 'S1', record, liveness, detail, heard },
    at: at(s),
  }),
  handed: (through: number): NewEventOf<'notices.handed'> => ({
    stream,
    type: 'notices.handed',
    data: { sessionId: 'S1', through, runId: 'r99' },
    at: at(100),
  }),
};

const spec = (...given: InboxInput[]) => deciderSpec(inboxDecider, initialInboxState('S1'), given);
const filed = (decisions: readonly InboxDecision[] | null) =>
  (decisions ?? [])
    .filter((d) => d.type === 'notice.filed')
    .map((d) => d.type === 'notice.filed' && `#${d.data.n} ${d.data.subscriptionId}@${d.data.source}`);

describe("notifications: each subscription's notices go in order, the cursor past each once filed", () => {
  it('given a live session with a subscription, when a round hears three events past its cursor, then three notices are filed in order', () => {
    const inbox = spec(input.opened());
    const decisions = inbox.when(input.read(20, [ended(14), ended(12), ended(13)]));
    expect(filed(decisions)).toEqual(['#1 sub1@12', '#2 sub1@13', '#3 sub1@14']);
    expect(decisions![0]!.data).toMatchObject({ sessionId: 'S1', text: 'run r12 of lane L ended: succeeded' });
    expect(inbox.state.subscriptions.sub1!.cursor).toBe(14);
  });

  it('given notices filed, when a round hears them again (another process, a lagging index), then nothing is filed (and nothing recorded)', () => {
    const inbox = spec(input.opened(), input.read(20, [ended(12), ended(13)]));
    expect(inbox.when(input.read(21, [ended(12), ended(13)]))).toBeNull();
    expect(filed(inbox.when(input.read(22, [ended(13), ended(15)])))).toEqual(['#3 sub1@15']);
  });

  it('given events before the subscription opened, when heard, then they are not filed: it hears only what came after', () => {
    expect(spec(input.opened('sub1', 10)).when(input.read(20, [ended(9), ended(10)]))).toBeNull();
  });

  it('given a closed subscription, or one never opened, when a round hears its events, then nothing is filed', () => {
    expect(spec(input.opened(), input.closed()).when(input.read(20, [ended(12)]))).toBeNull();
    expect(spec(input.opened()).when(input.read(20, [ended(12, 'r12', 'failed', 'other')]))).toBeNull();
  });

  it('given two subscriptions of one session, when both hear events, then each gets its own notices, all in the order of the log', () => {
    const decisions = spec(input.opened('sub1'), input.opened('sub2')).when(
      input.read(20, [ended(13, 'r13', 'failed', 'sub2'), ended(12), ended(13)]),
    );
    expect(filed(decisions)).toEqual(['#1 sub1@12', '#2 sub2@13', '#3 sub1@13']);
  });
});

describe('notifications: a session the board recorded ended is filed nothing until it is read running again', () => {
  it('given a session recorded ended that reads gone, when a round hears events, then nothing is filed, the cursor stays, and the board says so once', () => {
    const inbox = spec(input.opened());
    const withheld = inbox.when(input.read(20, [ended(12), ended(13)], 'ended', 'gone'));
    expect(withheld!.map((d) => d.type)).toEqual(['inbox.withheld']);
    expect(withheld![0]!.data).toEqual({
      sessionId: 'S1',
      reason: { code: 'not.running', session: 'S1', record: 'ended', liveness: 'gone', notices: 2 },
    });
    expect(reasonOf(withheld)).toBe(
      'session S1 is filed nothing: the board recorded it ended, and it reads gone; 2 notices wait until it runs again',
    );
    expect(inbox.state.subscriptions.sub1!.cursor).toBe(10);
    expect(inbox.when(input.read(30, [ended(12), ended(13), ended(14)], 'ended', 'stopped'))).toBeNull();
  });

  it('given a withheld session, when it is read running again, then everything it missed is filed, in order', () => {
    const inbox = spec(input.opened(), input.read(20, [ended(12)], 'ended', 'gone'));
    expect(filed(inbox.when(input.read(30, [ended(12), ended(13)], 'ended', 'running')))).toEqual(['#1 sub1@12', '#2 sub1@13']);
    expect(inbox.state.said).toBeNull();
  });

  it('given a session the board never saw run, when it reads stopped, then it is filed nothing either', () => {
    const decisions = spec(input.opened()).when(input.read(20, [ended(12)], 'unknown', 'stopped'));
    expect(reasonOf(decisions)).toBe(
      'session S1 is filed nothing: the board never saw it run, and it reads stopped; 1 notice waits until it runs again',
    );
  });
});

describe('notifications: a session whose liveness cannot be read waits, and the wait is reported', () => {
  it('given a session recorded ended whose liveness cannot be read, when a round hears events, then the wait is reported once and nothing filed', () => {
    const inbox = spec(input.opened());
    const waiting = inbox.when(input.read(20, [ended(12)], 'ended', 'unreadable', 'tmux: server busy'));
    expect(waiting!.map((d) => d.type)).toEqual(['inbox.waiting']);
    expect(reasonOf(waiting)).toBe('the liveness of session S1 could not be read (tmux: server busy): 1 notice waits until it can be');
    expect(inbox.when(input.read(30, [ended(12), ended(13)], 'ended', 'unreadable', 'tmux: server busy'))).toBeNull();
    expect(inbox.state.subscriptions.sub1!.cursor).toBe(10);
  });

  it('given a wait reported, when it can be read and reads gone, then the withholding is said (a new reason), once', () => {
    const inbox = spec(input.opened(), input.read(20, [ended(12)], 'ended', 'unreadable'));
    expect(inbox.when(input.read(30, [ended(12)], 'ended', 'gone'))!.map((d) => d.type)).toEqual(['inbox.withheld']);
  });

  it('given nothing to file, when its liveness cannot be read, then nothing is said: no notice waits', () => {
    expect(spec(input.opened()).when(input.read(20, [], 'ended', 'unreadable'))).toBeNull();
  });
});

describe('notifications: notices are handed to the agent ahead of its next prompt', () => {
  it('given three notices filed, when two were handed, then only the third is pending; a hand-over of what was handed is not recorded', () => {
    const inbox = spec(input.opened(), input.read(20, [ended(12), ended(13), ended(14)]));
    expect(inbox.when(input.handed(2))).toEqual([]);
    expect(inbox.state.pending.map((n) => n.n)).toEqual([3]);
    expect(inbox.when(input.handed(2))).toBeNull();
  });

  it('the prompt prefix lists each unread notice with its time, then a blank line; none gives an empty prefix', () => {
    const inbox = spec(input.opened(), input.read(20, [ended(12), ended(13, 'r13', 'failed')]));
    expect(noticePrefix(inbox.state.pending)).toBe(
      'Since your last turn (2 notices from the board):\n- 00:00:12 UTC: run r12 of lane L ended: succeeded\n- 00:00:13 UTC: run r13 of lane L ended: failed\n\n',
    );
    expect(noticePrefix([])).toBe('');
  });
});
