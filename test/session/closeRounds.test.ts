import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { sessionDecider } from '../../actors/session/sessionDecider.ts';
import { wordSessionReason } from '../../events/sessionReasons.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { entityTimeline } from '../../runtime/audit/runTimeline.ts';
import { appendOrThrow } from '../../runtime/store/eventStore.ts';
import { openTempStore, tempDbPath } from '../support/tempStore.ts';
import { COMPUTER, closerOn, gone, idle, intend, liveSiblingLock, ofType, ScriptedDriver, working } from './sessionSupport.ts';

const TICK = { tickMs: 10_000, quietMs: 120_000 };

describe('a round over the open closes, on a real log', () => {
  it('given a settled run that ran in a session, then its close is intended, claimed, deferred while in a turn, and closed once idle; the audit tells each step', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const driver = new ScriptedDriver();
    const closer = closerOn(store, clock, { driver, settings: TICK });
    await closer.open();
    const run = `${COMPUTER}/run:r1`;
    const t = clock.now();
    await appendOrThrow(store, {
      expected: { [run]: 0 },
      events: [
        { stream: run, type: 'run.handed.over', data: { runId: 'r1', lane: 'L', budgetS: 60, laneSession: null }, at: t },
        { stream: run, type: 'run.process.began', data: { runId: 'r1', pid: 4242, resuming: null }, at: t },
        { stream: run, type: 'run.session.announced', data: { runId: 'r1', sessionId: 'S1' }, at: t },
        {
          stream: run,
          type: 'run.process.exited',
          data: { runId: 'r1', outcome: 'exited', exitCode: 0, signal: null, reply: 'ok', tail: '', stderrTail: '' },
          at: t,
        },
        { stream: run, type: 'run.settled', data: { runId: 'r1', reported: true, reason: 'the board acknowledged its completion' }, at: t },
      ],
    });

    driver.set('S1', working());
    expect((await closer.round()).map((o) => o.outcome)).toEqual(['deferred']);
    clock.advance(10_000);
    driver.set('S1', idle());
    expect((await closer.round()).map((o) => o.outcome)).toEqual(['closed']);
    expect(driver.stops).toEqual(['pgid:4242']);
    clock.advance(10_000);
    expect(await closer.round()).toEqual([]);

    const log = await store.readStream(`${COMPUTER}/session:S1`);
    expect(log.map((e) => e.type)).toEqual([
      'session.run.ended',
      'session.close.intended',
      'session.close.due',
      'session.close.claimed',
      'session.read',
      'session.close.deferred',
      // Its own claim, with time to spare, is used again: the second round records only its reading.
      'session.read',
      'session.kill.requested',
      'session.kill.answered',
      'session.closed',
    ]);
    const timeline = (await entityTimeline(store, 'session', 'S1'))!;
    const lines = timeline.entries.map((e) => `${e.step}: ${e.reason}`);
    expect(lines).toContainEqual(
      expect.stringMatching(/^session.close.deferred: close deferred \(attempt 1\): its session is in a turn \(working\)/),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^session.kill.requested: close goes ahead \(attempt 2\), stopping pgid:4242: read idle/));
    expect(lines).toContainEqual(expect.stringMatching(/^session.closed: closed \(attempt 2\): stopped \(pgid:4242 stopped\)/));
    // The kill was taken from the outbox once, and the session's decisions re-decide the same (the run's
    // stream above was written by hand, not decided).
    expect(ofType(await store.readStream(`outbox:session-kills-${COMPUTER}`), 'outbox.performed')).toHaveLength(1);
    expect(await replayLog(store, [sessionDecider])).toMatchObject({ ok: true });
  });

  it('given two rounds on two store instances reaching one close at once, then one claims and reads it, and the other records nothing', async () => {
    const path = tempDbPath();
    const [a, b] = [await openTempStore(path), await openTempStore(path)];
    const clock = new FakeClock();
    const driver = new ScriptedDriver();
    const sibling = liveSiblingLock();
    const closers = [closerOn(a, clock, { driver, settings: TICK }), closerOn(b, clock, { driver, settings: TICK, lock: sibling.lock })];
    const sessions = Array.from({ length: 12 }, (_, i) => `S${i}`);
    for (const s of sessions) {
      driver.set(s, working());
      await intend(closers[0]!, s, `r-${s}`);
    }
    const outcomes = (await Promise.all(closers.map((c) => c.round()))).flat();
    expect(outcomes).toHaveLength(24);
    expect(outcomes.filter((o) => o.outcome === 'deferred')).toHaveLength(12);
    expect(outcomes.filter((o) => o.outcome === 'held')).toHaveLength(12);
    expect(driver.reads.sort()).toEqual([...sessions].sort());
    const log = await a.readAll(0, 10_000);
    for (const s of sessions) {
      const own = log.filter((e) => e.stream === `${COMPUTER}/session:${s}`);
      expect(ofType(own, 'session.close.claimed'), s).toHaveLength(1);
      expect(ofType(own, 'session.read'), s).toHaveLength(1);
      expect(ofType(own, 'session.close.incident'), s).toHaveLength(0);
    }
    // Each kept its own claims: the next round of each reads only its own, and the other's wait.
    clock.advance(10_000);
    driver.reads.length = 0;
    await Promise.all(closers.map((c) => c.round()));
    expect(driver.reads).toHaveLength(12);
    expect(await replayLog(a, deciders)).toMatchObject({ ok: true });
  });

  it("given a claim whose process died on this host, then the next round takes it at once; another host's claim holds until it expires", async () => {
    const path = tempDbPath();
    const [a, b, c] = [await openTempStore(path), await openTempStore(path), await openTempStore(path)];
    const clock = new FakeClock();
    const driver = new ScriptedDriver();
    const sibling = liveSiblingLock();
    const mine = closerOn(a, clock, { driver, settings: TICK });
    const siblings = closerOn(b, clock, { driver, settings: TICK, lock: sibling.lock });
    const far = closerOn(c, clock, { driver, settings: TICK, lock: 'another-host:77' });
    await intend(mine, 'S1', 'r1');
    await intend(mine, 'S2', 'r2');
    driver.set('S1', new Error('tmux: server busy'));
    driver.set('S2', new Error('tmux: server busy'));

    // S1 is claimed by the sibling on this host, S2 from another host: each round before theirs holds.
    await siblings.round();
    expect((await mine.round()).map((o) => o.outcome)).toEqual(['held', 'held']);
    expect((await far.round()).map((o) => o.outcome)).toEqual(['held', 'held']);

    await sibling.kill();
    clock.advance(10_000);
    const taken = await mine.round();
    expect(taken.map((o) => o.outcome)).toEqual(['deferred', 'deferred']);
    expect(taken[0]!.reason).toMatch(/could not be read just now \(tmux: server busy\)/);

    // Now this process holds both; from another host its claim holds until it expires, then it is open.
    clock.advance(14 * 60_000);
    expect((await far.round()).map((o) => o.outcome)).toEqual(['held', 'held']);
    clock.advance(60_000);
    driver.set('S1', gone());
    driver.set('S2', gone());
    expect((await far.round()).map((o) => o.outcome)).toEqual(['closed', 'closed']);
    const claims = ofType(await a.readAll(0, 10_000), 'session.close.claimed').map((e) => `${e.stream.slice(-2)} ${e.data.lock}`);
    expect(claims).toEqual([
      `S1 ${sibling.lock}`,
      `S2 ${sibling.lock}`,
      `S1 ${hostname()}:${process.pid}`,
      `S2 ${hostname()}:${process.pid}`,
      'S1 another-host:77',
      'S2 another-host:77',
    ]);
    expect(await replayLog(a, deciders)).toMatchObject({ ok: true });
  });
});

describe('a kill cut short by a crash', () => {
  it('given a kill taken by a process that died before it was done, then it is recorded interrupted and never run; the next round claims the close and reads it afresh', async () => {
    const path = tempDbPath();
    const dead = liveSiblingLock();
    await dead.kill();
    const [a, d] = [await openTempStore(path), await openTempStore(path, { writer: dead.lock })];
    const clock = new FakeClock();
    const stream = `${COMPUTER}/session:S1`;
    // The dead process claimed the close, read it idle, decided the kill and took it from the outbox.
    const crashed = closerOn(d, clock, { driver: new ScriptedDriver() });
    await intend(crashed, 'S1', 'r1');
    await crashed.actors.step('S1', (_, at) => ({
      stream,
      type: 'session.close.due',
      data: { sessionId: 'S1', lock: dead.lock, ttlMs: 15 * 60_000, holder: null },
      at,
    }));
    const read = await crashed.actors.step('S1', (_, at) => ({
      stream,
      type: 'session.read',
      data: {
        sessionId: 'S1',
        lock: dead.lock,
        activity: idle('tmux:%7'),
        failure: null,
        settings: { quietMs: 120_000, gapMs: 60_000, launchWindowMs: 180_000 },
      },
      at,
    }));
    const kill = read.decisions[0]!;
    expect(kill.type).toBe('session.kill.requested');
    const consumer = `outbox:session-kills-${COMPUTER}`;
    await appendOrThrow(d, {
      expected: { [consumer]: 0 },
      events: [{ stream: consumer, type: 'outbox.taken', data: { through: kill.seq, effects: [kill.seq] }, at: clock.now() }],
    });

    const driver = new ScriptedDriver();
    driver.set('S1', gone());
    const closer = closerOn(a, clock, { driver });
    await closer.open();
    expect(ofType(await a.readStream(consumer), 'outbox.interrupted').map((e) => e.data.effect)).toEqual([kill.seq]);
    clock.advance(10_000);
    expect((await closer.round()).map((o) => o.outcome)).toEqual(['closed']);
    expect(driver.stops).toEqual([]);
    const log = await a.readStream(stream);
    const claimed = ofType(log, 'session.close.claimed').at(-1)!.data;
    expect(claimed).toMatchObject({ lock: closer.lock, reason: { code: 'taken.over', expired: false, unanswered: 1 } });
    expect(wordSessionReason(claimed.reason)).toMatch(/its process is gone.*the kill of attempt 1 was never answered, so it is read again/);
    expect(ofType(log, 'session.closed')[0]!.data).toMatchObject({ attempt: 2 });
    expect(await replayLog(a, [sessionDecider])).toMatchObject({ ok: true });
  });
});
