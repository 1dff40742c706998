import { describe, expect, it } from 'vitest';
import { wordQueueReason } from '../../events/queueReasons.ts';
import { decisionOf } from '../support/deciderSpec.ts';
import { input, queueSpec, summary } from '../support/queueSpec.ts';

const { configured, frame, answer, ended, held, startFailed } = input;

describe('queue: lanes and slots', () => {
  it('given two lanes, when a second turn of the first lane arrives, then only the oldest run of each lane is a candidate', () => {
    const spec = queueSpec(configured(3), frame('a1', 'A'));
    expect(summary(spec.when(frame('a2', 'A')))).toEqual(['ack 202 a2', 'queued a2']);
    expect(summary(spec.when(frame('b1', 'B')))).toEqual(['ack 202 b1', 'queued b1', 'claim b1 #1']);
  });

  it('given one slot taken, when another lane queues, then it waits for the slot and starts when the first ends', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 200));
    expect(summary(spec.when(frame('b1', 'B')))).toEqual(['ack 202 b1', 'queued b1']);
    expect(summary(spec.when(ended('a1', 5)))).toEqual(['ended a1', 'claim b1 #1']);
  });

  it('given a busy lane, then later lanes are not blocked by it', () => {
    const spec = queueSpec(configured(2), frame('a1', 'A'), frame('a2', 'A'), frame('a3', 'A'));
    expect(summary(spec.when(frame('b1', 'B')))).toEqual(['ack 202 b1', 'queued b1', 'claim b1 #1']);
  });

  it('given a full agent login, then its candidate is vetoed without losing its place, and another login runs', () => {
    const spec = queueSpec(configured(3, { x: 1 }), frame('a1', 'A', 0, { agentId: 'x' }), answer('a1', 200));
    expect(summary(spec.when(frame('b1', 'B', 1, { agentId: 'x' })))).toEqual(['ack 202 b1', 'queued b1']);
    expect(summary(spec.when(frame('c1', 'C', 2, { agentId: 'y' })))).toEqual(['ack 202 c1', 'queued c1', 'claim c1 #1']);
    spec.when(frame('d1', 'D', 3, { agentId: 'x' }));
    // b1 came before d1: it goes first once the login has room.
    expect(summary(spec.when(ended('a1', 4)))).toEqual(['ended a1', 'claim b1 #1']);
  });

  it('given a held scheduler, then nothing starts until it is released', () => {
    const spec = queueSpec(configured(2), held(true));
    expect(summary(spec.when(frame('a1', 'A')))).toEqual(['ack 202 a1', 'queued a1']);
    expect(summary(spec.when(held(false)))).toEqual(['claim a1 #1']);
  });

  it('given a claimed run that could not start, then it goes back to its old place, ahead of its lane', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), frame('a2', 'A'), answer('a1', 200));
    expect(summary(spec.when(startFailed('a1')))).toEqual(['requeued a1', 'claim a1 #1']);
    expect(spec.state.lanes.A!.waiting).toEqual(['a2']);
  });

  it('given a run in the queue, when its frame comes again, then it is not queued twice', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), frame('b1', 'B'));
    expect(summary(spec.when(frame('b1', 'B', 1)))).toEqual(['ack 202 b1']);
    expect(Object.keys(spec.state.runs)).toEqual(['a1', 'b1']);
  });

  it('given a run already handled, when its frame comes again, then it is acknowledged and not queued', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 409, 1));
    expect(summary(spec.when(frame('a1', 'A', 2)))).toEqual(['ack 202 a1']);
    expect(spec.state.runs.a1).toBeUndefined();
  });

  it('given a frame for another computer or of an unknown kind, then it is acknowledged 200 and ignored', () => {
    const spec = queueSpec(configured(1));
    expect(summary(spec.when(frame('a1', 'A', 0, { computerId: 'c2' })))).toEqual(['ack 200 a1']);
    expect(summary(spec.when(frame('a2', 'A', 0, { kind: 'run.exploded' })))).toEqual(['ack 200 a2']);
  });

  it('given a queued unclaimed run, when a run.cancelled frame comes, then it leaves the queue and nothing runs', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), frame('b1', 'B'));
    expect(summary(spec.when(input.cancelFrame('b1')))).toEqual(['ack 202 b1', 'withdrawn b1']);
    expect(summary(spec.when(answer('a1', 200)))).toEqual(['claimed a1']);
    expect(summary(spec.when(ended('a1')))).toEqual(['ended a1']);
  });

  it('given a draining computer, when a new frame comes, then it is answered 503 draining', () => {
    const spec = queueSpec(configured(1), input.drain());
    const decisions = spec.when(frame('a1', 'A'));
    expect(summary(decisions)).toEqual(['ack 503 a1']);
    expect(wordQueueReason(decisionOf(decisions, 'frame.acknowledged').data.reason)).toBe('draining');
  });
});
