/**
 * The queue's state is bounded by what is live (issue 16): a run handled here leaves it entirely, so
 * its checkpoint, parsed at every start, does not grow with the runs ever handled. A frame resent for
 * a handled run is still not queued again: the shell records on it what the log says of the run.
 */
import { describe, expect, it } from 'vitest';
import { input, queueSpec, summary } from '../support/queueSpec.ts';

const { configured, frame, answer, ended, cancelFrame } = input;

/** The queue after `count` runs, each queued, claimed and ended on one lane. */
function afterRuns(count: number) {
  const spec = queueSpec(configured(1));
  for (let i = 0; i < count; i++) {
    spec.when(frame(`r${i}`, 'A', 3 * i));
    spec.when(answer(`r${i}`, 200, 3 * i + 1));
    spec.when(ended(`r${i}`, 3 * i + 2));
  }
  return spec;
}

describe('queue: bounded by what is live', () => {
  it('given 400 runs handled, then its state equals the one after 12 (nothing kept per run ever handled)', () => {
    const few = afterRuns(12).state;
    const many = afterRuns(400).state;
    expect(many.runs).toEqual({});
    // Only the arrival counter tells them apart.
    expect({ ...many, arrivals: 0 }).toEqual({ ...few, arrivals: 0 });
    expect(JSON.stringify({ ...many, arrivals: 0 }).length).toBe(JSON.stringify({ ...few, arrivals: 0 }).length);
  });

  it('given a run handled here, when the board resends its frame or a cancel, then it is answered as handled and not queued again', () => {
    const spec = afterRuns(3);
    expect(summary(spec.when(frame('r1', 'A', 100)))).toEqual(['ack 202 r1']);
    expect(summary(spec.when(cancelFrame('r1', 101)))).toEqual(['ack 202 r1']);
    // A run this computer never had: a cancel is not its to answer.
    expect(summary(spec.when(cancelFrame('r9', 102)))).toEqual(['ack 200 r9']);
  });

  it('given a frame recorded as about a live run that settled before it was decided, then the queue ignores it (the shell looks again)', () => {
    const spec = afterRuns(1);
    const raced = frame('r0', 'A', 10);
    expect(spec.when({ ...raced, data: { ...raced.data, handled: 'live' } })).toBeNull();
  });
});
