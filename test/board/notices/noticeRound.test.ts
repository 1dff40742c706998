import { describe, expect, it } from 'vitest';
import { fileNotices, type LivenessReader, unreadableLiveness } from '../../../apps/board/chores/notices/noticeRound.ts';
import { openSubscription } from '../../../apps/board/chores/notices/subscriptions.ts';
import { markHanded, noticePrefix, unreadNotices } from '../../../apps/computer/unreadNotices.ts';
import type { DomainEvent } from '../../../events/catalog.ts';
import { cursorsProjection } from '../../../projections/cursors.ts';
import { type NoticesIndex, noticesProjection } from '../../../projections/notices.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';
import { hydrateProjections } from '../../../runtime/folds/hydrate.ts';
import { rebuildProjections } from '../../../runtime/folds/keeper/rebuild.ts';
import { projections } from '../../../runtime/folds/keeper/registry.ts';
import type { EventStore } from '../../../runtime/store/eventStore.ts';
import { announceSession, appendRun, closeSession } from '../../fixtures/hooks/boardLog.ts';
import { openTempStore } from '../../support/tempStore.ts';

async function index(store: EventStore): Promise<NoticesIndex> {
  return (await hydrateProjections(store, [noticesProjection])).get(noticesProjection.name)!.state as NoticesIndex;
}

const filedIn = async (store: EventStore, sessionId: string) =>
  (await store.readStream(`inbox:${sessionId}`))
    .filter((e): e is DomainEvent & { type: 'notice.filed' } => e.type === 'notice.filed')
    .map((e) => e.data);

const reads = (answers: Record<string, 'running' | 'stopped' | 'gone' | Error>): LivenessReader => ({
  read: async (sessionId) => {
    const answer = answers[sessionId];
    if (answer === undefined || answer instanceof Error) throw answer ?? new Error('unknown session');
    return answer;
  },
});

describe('notifications on a real log', () => {
  it("given a live session subscribed to a lane's runs ending, when runs of several lanes end, then only its lane's ends are filed, in order, once", async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    await appendRun(store, 'old', 'L', {});
    await announceSession(store, 'c1', 'old', 'S1');
    const { subscriptionId } = await openSubscription(store, clock, { sessionId: 'S1', lane: 'L', kinds: ['run.ended'] });
    const ends = [];
    for (const [runId, lane] of [
      ['r1', 'L'],
      ['r2', 'M'],
      ['r3', 'L'],
    ] as const)
      ends.push({ runId, lane, ...(await appendRun(store, runId, lane)) });

    const report = await fileNotices({ store, clock, liveness: unreadableLiveness }, await index(store));
    expect(report).toEqual({ filed: [['S1', 2]], waiting: [], skipped: [] });
    expect((await filedIn(store, 'S1')).map((n) => [n.n, n.runId, n.source, n.text])).toEqual([
      [1, 'r1', ends[0]!.finished, 'run r1 of lane L ended: succeeded'],
      [2, 'r3', ends[2]!.finished, 'run r3 of lane L ended: succeeded'],
    ]);
    // A second round (the index caught up or not) files nothing again.
    expect((await fileNotices({ store, clock, liveness: unreadableLiveness }, await index(store))).filed).toEqual([]);
    const cursors = (await hydrateProjections(store, [cursorsProjection])).get('cursors')!.state as { notices: Record<string, number> };
    expect(cursors.notices[subscriptionId]).toBe(ends[2]!.finished);
    expect((await rebuildProjections(store, projections)).filter((r) => !r.equal)).toEqual([]);
  });

  it("given two sessions whose notices are due, when the round files them, then the one that heard the older is filed first, whatever their subscription ids (digits alone sort first among an object's keys)", async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    await announceSession(store, 'c1', 'r0', 'SA');
    await announceSession(store, 'c1', 'r0', 'SB');
    await openSubscription(store, clock, { sessionId: 'SA', lane: 'L', kinds: ['run.ended'], subscriptionId: 'a1b2c3d4' });
    await openSubscription(store, clock, { sessionId: 'SB', lane: 'M', kinds: ['run.ended'], subscriptionId: '12345678' });
    await appendRun(store, 'r1', 'L');
    await appendRun(store, 'r2', 'M');

    const report = await fileNotices({ store, clock, liveness: unreadableLiveness }, await index(store));
    expect(report.filed).toEqual([
      ['SA', 1],
      ['SB', 1],
    ]);
  });

  it('given a filing that fails, when the round runs, then the cursor stays before it; the next round files it, in order', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    await announceSession(store, 'c1', 'r0', 'S1');
    const { from } = await openSubscription(store, clock, { sessionId: 'S1', kinds: ['run.claimed', 'run.ended'] });
    await appendRun(store, 'r1', 'L');
    let failures = 1;
    const failing: EventStore = Object.create(store, {
      append: {
        value: (request: Parameters<EventStore['append']>[0]) => {
          if (request.events.some((e) => e.type === 'inbox.read') && failures-- > 0) return Promise.reject(new Error('disk I/O error'));
          return store.append(request);
        },
      },
    });

    const failed = await fileNotices({ store: failing, clock, liveness: unreadableLiveness }, await index(store));
    expect(failed.skipped).toEqual([['S1', 'filing failed: disk I/O error']]);
    expect(await filedIn(store, 'S1')).toEqual([]);
    const cursors = (await hydrateProjections(store, [cursorsProjection])).get('cursors')!.state as { notices: Record<string, number> };
    expect(Object.values(cursors.notices)).toEqual([from]);

    await fileNotices({ store: failing, clock, liveness: unreadableLiveness }, await index(store));
    expect((await filedIn(store, 'S1')).map((n) => n.kind)).toEqual(['run.claimed', 'run.ended']);
  });

  it('given a session the board recorded ended, when it reads gone, then it is filed nothing and its cursor stays; read running again, then it is told what it missed', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    await announceSession(store, 'c1', 'r0', 'S1');
    await openSubscription(store, clock, { sessionId: 'S1', lane: 'L', kinds: ['run.ended'] });
    await closeSession(store, 'c1', 'S1');
    await appendRun(store, 'r1', 'L');
    const answers: Record<string, 'running' | 'gone'> = { S1: 'gone' };

    const held = await fileNotices({ store, clock, liveness: reads(answers) }, await index(store));
    expect(held.waiting).toEqual([
      ['S1', 'session S1 is filed nothing: the board recorded it ended, and it reads gone; 1 notice waits until it runs again'],
    ]);
    await appendRun(store, 'r2', 'L');
    expect((await fileNotices({ store, clock, liveness: reads(answers) }, await index(store))).filed).toEqual([]);
    expect((await store.readStream('inbox:S1')).map((e) => e.type)).toEqual(['subscription.opened', 'inbox.read', 'inbox.withheld']);

    answers.S1 = 'running';
    await fileNotices({ store, clock, liveness: reads(answers) }, await index(store));
    expect((await filedIn(store, 'S1')).map((n) => n.runId)).toEqual(['r1', 'r2']);
  });

  it('given a session whose liveness cannot be read, when a round hears events for it, then they wait and the wait is reported, in the log once and in every round', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    await openSubscription(store, clock, { sessionId: 'S9', kinds: ['run.started'] });
    await appendRun(store, 'r1', 'L');

    for (let round = 0; round < 3; round++) {
      const report = await fileNotices({ store, clock, liveness: reads({ S9: new Error('tmux: server busy') }) }, await index(store));
      expect(report.waiting).toEqual([['S9', 'the liveness of session S9 could not be read (tmux: server busy): 1 notice waits until it can be']]);
    }
    expect((await store.readStream('inbox:S9')).map((e) => e.type)).toEqual(['subscription.opened', 'inbox.read', 'inbox.waiting']);
  });

  it('given notices filed, when a turn starts, then they are handed ahead of the prompt once, and the next turn is handed only what came after', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    await announceSession(store, 'c1', 'r0', 'S1');
    await openSubscription(store, clock, { sessionId: 'S1', kinds: ['run.ended'] });
    await appendRun(store, 'r1', 'L');
    await fileNotices({ store, clock, liveness: unreadableLiveness }, await index(store));

    const unread = await unreadNotices(store, 'S1');
    expect(noticePrefix(unread.notices)).toBe(
      'Since your last turn (1 notice from the board):\n- 00:00:00 UTC: run r1 of lane L ended: succeeded\n\n',
    );
    await markHanded(store, 'S1', unread.through, 'r5', clock.now());
    expect(await unreadNotices(store, 'S1')).toEqual({ notices: [], through: 0 });

    await appendRun(store, 'r2', 'L');
    await fileNotices({ store, clock, liveness: unreadableLiveness }, await index(store));
    expect((await unreadNotices(store, 'S1')).notices.map((n) => n.text)).toEqual(['run r2 of lane L ended: succeeded']);
  });
});
