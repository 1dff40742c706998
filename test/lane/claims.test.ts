import { describe, expect, it } from 'vitest';
import { errorCodeOf } from '../../actors/lane/claimAnswer.ts';
import { WAITS_FOR_EARLIER_TURN, wordQueueReason } from '../../events/queueReasons.ts';
import { decisionOf } from '../support/deciderSpec.ts';
import { input, queueSpec, summary } from '../support/queueSpec.ts';

const { configured, frame, answer, ended, timer, drain } = input;
const BUSY = 'conversation_busy';
const s = (ms: number) => ms * 1000;

describe('queue: claim answers', () => {
  it('given a claim in flight, when it is answered 200, then the run is claimed', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'));
    expect(summary(spec.when(answer('a1', 200)))).toEqual(['claimed a1']);
  });

  it('given a claim, when the conversation is busy, then the run is parked (not skipped) and its slot and lane go to other work', () => {
    const spec = queueSpec(configured(1), frame('a2', 'A'), frame('a1', 'A', 1), frame('b1', 'B', 2));
    const decisions = spec.when(answer('a2', 409, s(1), BUSY));
    expect(summary(decisions)).toEqual(['parked a2 waits=1 +30000ms logged', 'claim a1 #1']);
    expect(wordQueueReason(decisionOf(decisions, 'run.parked').data.reason)).toBe(WAITS_FOR_EARLIER_TURN);
  });

  it('given repeated busy answers, then the waits are 30, 60, 120, 120 s and only the first is logged', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'));
    const waits: string[] = [];
    let at = 0;
    for (let i = 0; i < 4; i++) {
      const parked = spec.when(answer('a1', 409, at, BUSY))!;
      waits.push(summary(parked)[0]!);
      const notBefore = decisionOf(parked, 'run.parked').data.notBefore - Date.UTC(2026, 0, 1);
      at = notBefore;
      expect(summary(spec.when(timer('a1', at)))).toEqual([`claim a1 #1`]);
    }
    expect(waits).toEqual([
      'parked a1 waits=1 +30000ms logged',
      'parked a1 waits=2 +60000ms',
      'parked a1 waits=3 +120000ms',
      'parked a1 waits=4 +120000ms',
    ]);
  });

  it('accepts the busy code in each of its three shapes, matched exactly', () => {
    expect(errorCodeOf({ detail: { error: BUSY } })).toBe(BUSY);
    expect(errorCodeOf({ detail: BUSY })).toBe(BUSY);
    expect(errorCodeOf({ error: BUSY })).toBe(BUSY);
    expect(errorCodeOf({ detail: ['x'] })).toBeUndefined();
    expect(errorCodeOf('conversation_busy')).toBeUndefined();
  });

  it('given a 409 with another code or none, then another computer has it: skipped', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), frame('b1', 'B'));
    const decisions = spec.when(answer('a1', 409, 0, 'Conversation_Busy'));
    expect(summary(decisions)).toEqual(['skipped a1', 'claim b1 #1']);
    expect(wordQueueReason(decisionOf(decisions, 'run.skipped').data.reason)).toBe('skipped: another computer has it');
  });

  it.each([404, 410])('given a %i, then the run is gone: skipped', (status) => {
    const spec = queueSpec(configured(1), frame('a1', 'A'));
    expect(summary(spec.when(answer('a1', status)))).toEqual(['skipped a1']);
  });

  it('given network errors, 429 and 5xx, then the claim is retried at 2, 4, 8, 16 s and skipped after the fifth attempt', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'));
    const statuses = [0, 429, 500, 503];
    let at = 0;
    const seen: string[] = [];
    for (const status of statuses) {
      const decisions = spec.when(answer('a1', status, at))!;
      seen.push(summary(decisions)[0]!);
      const retrying = decisionOf(decisions, 'run.claim.retrying');
      at += retrying.data.notBefore - retrying.at;
      expect(summary(spec.when(timer('a1', at)))[0]).toMatch(/^claim a1 #/);
    }
    expect(seen).toEqual([
      'retrying a1 attempts=1 +2000ms',
      'retrying a1 attempts=2 +4000ms',
      'retrying a1 attempts=3 +8000ms',
      'retrying a1 attempts=4 +16000ms',
    ]);
    const last = spec.when(answer('a1', 502, at))!;
    expect(summary(last)).toEqual(['skipped a1']);
    expect(wordQueueReason(decisionOf(last, 'run.skipped').data.reason)).toBe('skipped: the claim failed 5 times (last: 502)');
  });

  it('given a run waiting out a claim retry, then its lane waits behind it', () => {
    const spec = queueSpec(configured(2), frame('a1', 'A'), frame('a2', 'A'));
    expect(summary(spec.when(answer('a1', 503)))).toEqual(['retrying a1 attempts=1 +2000ms']);
    expect(summary(spec.when(timer('a1', 2000)))).toEqual(['claim a1 #2']);
  });

  it('given a draining computer, when the conversation is busy, then the run is skipped instead of parked', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), drain(1));
    expect(summary(spec.when(answer('a1', 409, 2, BUSY)))).toEqual(['skipped a1']);
  });

  it('given a late answer to a run no longer claiming, then it is ignored', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 409));
    expect(summary(spec.when(answer('a1', 200, 5)))).toEqual(['(ignored)']);
  });
});

describe('queue: parked runs, resends and timers', () => {
  it('order 1 (claim sent, busy answered, frame resent): the resend claims it at once', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 409, s(1), BUSY));
    expect(summary(spec.when(frame('a1', 'A', s(5))))).toEqual(['ack 202 a1', 'unparked a1', 'claim a1 #1']);
  });

  it('order 2 (claim sent, frame resent, busy answered): the busy answer is stale, requeued and claimed at once', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), frame('a1', 'A', s(1)));
    expect(summary(spec.when(answer('a1', 409, s(2), BUSY)))).toEqual(['requeued a1', 'claim a1 #1']);
  });

  it('order 3 (frame resent before the claim was sent, then busy): the busy answer is genuine, parked', () => {
    const spec = queueSpec(configured(1), frame('b1', 'B'), frame('a1', 'A', 1), frame('a1', 'A', 2), ended('b1', 3));
    expect(summary(spec.when(answer('a1', 409, 4, BUSY)))).toEqual(['parked a1 waits=1 +30000ms logged']);
  });

  it('given a lane whose second turn arrived first, then the second is parked, the first runs, and the resend claims the second', () => {
    const spec = queueSpec(configured(1), frame('turn2', 'A'), frame('turn1', 'A', 1));
    expect(summary(spec.when(answer('turn2', 409, 2, BUSY)))).toEqual(['parked turn2 waits=1 +30000ms logged', 'claim turn1 #1']);
    expect(summary(spec.when(answer('turn1', 200, 3)))).toEqual(['claimed turn1']);
    expect(summary(spec.when(ended('turn1', s(10))))).toEqual(['ended turn1']);
    expect(summary(spec.when(frame('turn2', 'A', s(10) + 5)))).toEqual(['ack 202 turn2', 'unparked turn2', 'claim turn2 #1']);
  });

  it('given a parked run, then it does not hold its lane but never runs beside its lane', () => {
    const spec = queueSpec(configured(2), frame('a1', 'A'), frame('a2', 'A'), answer('a1', 409, 1, BUSY));
    expect(spec.state.lanes.A!.active).toBe('a2');
    // The wait is over while a2 still runs: a1 does not start beside it.
    expect(summary(spec.when(timer('a1', s(30) + 1)))).toEqual([]);
    expect(summary(spec.when(ended('a2', s(31))))).toEqual(['ended a2', 'claim a1 #1']);
  });

  it('given a parked run, when its timer fires early, late or twice, then nothing wrong happens', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 409, 0, BUSY));
    expect(summary(spec.when(timer('a1', s(10))))).toEqual(['(ignored)']);
    expect(summary(spec.when(timer('a1', s(45))))).toEqual(['claim a1 #1']);
    expect(summary(spec.when(timer('a1', s(46))))).toEqual(['(ignored)']);
  });
});
