import { describe, expect, it } from 'vitest';
import { framesOf } from '../../actors/board/boardAnswers.ts';
import { computerList } from '../../actors/board/boardQueries.ts';
import { decisionOf } from '../support/deciderSpec.ts';
import { boardSpec, computersOnline, input, olderInput, pushed, said, summary, T0 } from './boardSpec.ts';

const { submit, claim, connected, disconnected, added, draining } = input;

describe('board: a reconnect costs O(1) events (docs/rules.md#the-log, growth is bounded)', () => {
  it('a computer that reconnects 200 times with 100 runs queued adds at most 3 events a reconnect, and is pushed every unclaimed run each time', () => {
    const runs = Array.from({ length: 100 }, (_, i) => submit(`r${i}`, `L${i % 7}`, i));
    const spec = boardSpec(added('c1'), ...runs);
    let events = 0;
    for (let i = 0; i < 200; i++) {
      const online = spec.when(connected('c1', 1_000 + 2 * i));
      expect(pushed(online, spec.state)).toHaveLength(100);
      const offline = spec.when(disconnected('c1', 1_001 + 2 * i));
      // Each input is recorded with its decisions.
      events += 1 + online!.length + 1 + offline!.length;
    }
    expect(events / 200).toBeLessThanOrEqual(2 * 3);
    expect(summary(spec.when(connected('c1', 5_000)))).toEqual(['online c1']);
  });

  it('a connecting computer is pushed every unclaimed run oldest first, except lanes whose last computer is another connected one; a cancel is announced to it', () => {
    // The older rule (inputs without oneOffer, as older logs hold them; oneOffer.test.ts has today's).
    const { added, submit, connected, claim, cancel } = olderInput;
    const spec = boardSpec(added('c1'), added('c2'), submit('r1', 'A'), submit('r2', 'B', 1), submit('r3', 'A', 2), submit('r4', 'C', 3));
    spec.when(connected('c1', 5));
    spec.when(claim('r2', 'c1', 6));
    spec.when(submit('r5', 'B', 7));
    const online = spec.when(connected('c2', 9));
    expect(summary(online)).toEqual(['online c2']);
    // Lane B stays with c1, which ran its last turn and is connected.
    expect(pushed(online, spec.state)).toEqual(['run.requested r1 → c2', 'run.requested r3 → c2', 'run.requested r4 → c2']);
    expect(said(online![0]!)).toMatchObject({ reason: 'connected to the push stream: pushed 3 unclaimed runs' });
    expect(summary(spec.when(cancel('r4', 10)))).toEqual(['cancelled r4 → c1,c2']);
  });

  it("the frames of a reconnect have ids of their own: the online decision's seq and the run", () => {
    const spec = boardSpec(added('c1'), submit('r1', 'A'));
    const [online] = spec.when(connected('c1', 1))!;
    expect(framesOf({ ...online!, seq: 42 }, spec.state)).toEqual([
      { computerId: 'c1', frame: { id: '42-r1', kind: 'run.requested', data: { run_id: 'r1', lane: 'A', computer_id: 'c1' } } },
    ]);
  });
});

describe('board: a draining computer (a 503 `draining` ack, docs/rules.md#computer-behaviour)', () => {
  it('a run a draining computer declines is offered at once to another connected computer, and the draining one is offered nothing more until it reconnects', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('a0', 'A'), claim('a0', 'c1', 1), input.complete('a0', 'c1', true, undefined, 2));
    spec.when(added('c2'));
    spec.when(connected('c2', 3));
    // Lane A ran on c1: its next run goes to c1 alone.
    expect(summary(spec.when(submit('a1', 'A', 4)))).toEqual(['queued a1 #1', 'offered a1 → c1']);
    const declined = spec.when(draining('a1', 'c1', 5));
    expect(summary(declined)).toEqual(['draining c1', 'offered a1 → c2']);
    expect(said(decisionOf(declined, 'board.run.offered')).reason).toMatch(/^re-offered: c1 is draining; to /);
    // A new run of its lane, or of a new lane, does not go to c1 while it drains.
    expect(summary(spec.when(submit('a2', 'A', 6)))).toEqual(['queued a2 #2', 'offered a2 → c2']);
    expect(summary(spec.when(submit('b1', 'B', 7)))).toEqual(['queued b1 #3', 'offered b1 → c2']);
    // A second decline from it changes nothing: not recorded.
    expect(summary(spec.when(draining('a1', 'c1', 8)))).toEqual(['(ignored)']);
    // It reconnects (a new life): it takes work again.
    spec.when(disconnected('c1', 9));
    expect(summary(spec.when(connected('c1', 10)))).toEqual(['online c1']);
    // One computer at a time: c1, which has the most room.
    expect(summary(spec.when(submit('c1run', 'C', 11)))).toEqual(['queued c1run #4', 'offered c1run → c1']);
  });

  it('a decline with nobody else connected marks the computer draining, and the run waits for someone', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'));
    expect(summary(spec.when(draining('r1', 'c1', 1)))).toEqual(['draining c1']);
    expect(summary(spec.when(submit('r2', 'B', 2)))).toEqual(['queued r2 #1']);
    spec.when(added('c2'));
    const online = spec.when(connected('c2', 3));
    expect(pushed(online, spec.state)).toEqual(['run.requested r1 → c2', 'run.requested r2 → c2']);
  });

  it('a decline of a run that is claimed, gone, or from a computer not connected is ignored and not recorded', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('r1', 'A'), claim('r1', 'c2', 1));
    expect(summary(spec.when(draining('r1', 'c1', 2)))).toEqual(['(ignored)']);
    expect(summary(spec.when(draining('ghost', 'c1', 2)))).toEqual(['(ignored)']);
    spec.when(submit('r2', 'B', 3));
    spec.when(disconnected('c1', 4));
    expect(summary(spec.when(draining('r2', 'c1', 5)))).toEqual(['(ignored)']);
  });
});

describe('board: when each computer was last seen', () => {
  it('lists each computer as connected since its connect, or last seen when its stream was last heard from, or never', () => {
    const spec = boardSpec(
      added('c1'),
      added('c2'),
      added('c3'),
      connected('c1', 1_000, ['web', 'app']),
      connected('c2', 2_000),
      disconnected('c2', 60_000, 35_000),
    );
    expect(computerList(spec.state)).toEqual([
      { computerId: 'c1', connected: true, connectedAt: T0 + 1_000, lastSeenAt: null, repos: ['web', 'app'] },
      { computerId: 'c2', connected: false, connectedAt: null, lastSeenAt: T0 + 35_000, repos: null },
      { computerId: 'c3', connected: false, connectedAt: null, lastSeenAt: null, repos: null },
    ]);
    // Without a last sign of life, its disconnect is when it was last seen; its repositories are kept.
    spec.when(disconnected('c1', 70_000));
    expect(computerList(spec.state)[0]).toEqual({
      computerId: 'c1',
      connected: false,
      connectedAt: null,
      lastSeenAt: T0 + 70_000,
      repos: ['web', 'app'],
    });
  });
});
