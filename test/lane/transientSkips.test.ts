/**
 * A skip that is no verdict on the run (its claims failed for the network's or the board's reasons, or
 * it came while this computer drained) does not keep the run out of this computer's queue for good:
 * the board pushes an unclaimed run again (a reconnect, a resend) precisely so that it is claimed.
 * Found by the simulator: a run offered only to the computer that skipped it stayed queued on the board
 * for ever, every re-push answered "already handled here (skipped)".
 */
import { describe, expect, it } from 'vitest';
import { input, queueSpec, summary } from '../support/queueSpec.ts';

const { configured, frame, answer, timer, drain } = input;

describe('queue: a skip for a passing reason is not the run handled', () => {
  it('given a run skipped after five failed claims (network errors), when the board pushes it again, then it is queued and claimed', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'));
    let at = 0;
    for (const wait of [2_000, 4_000, 8_000, 16_000]) {
      spec.when(answer('a1', 0, at));
      at += wait;
      spec.when(timer('a1', at));
    }
    expect(summary(spec.when(answer('a1', 0, at)))).toEqual(['skipped a1']);

    expect(summary(spec.when(frame('a1', 'A', at + 60_000)))).toEqual(['ack 202 a1', 'queued a1', 'claim a1 #1']);
  });

  it('given a run skipped as busy while the computer drained, when its next life is pushed the run again, then it is queued and claimed', () => {
    const drained = drain(1);
    const spec = queueSpec(configured(1), frame('a1', 'A'), drained);
    expect(summary(spec.when(answer('a1', 409, 2, 'conversation_busy')))).toEqual(['skipped a1']);
    spec.when({ stream: 'c1/computer:c1', type: 'computer.started', data: { incarnation: 'life-2', host: 'h', pid: 2 }, at: drained.at + 10 });

    expect(summary(spec.when(frame('a1', 'A', 20)))).toEqual(['ack 202 a1', 'queued a1', 'claim a1 #1']);
  });

  it('given a run skipped because another computer has it, when it is pushed again, then it stays handled', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'));
    spec.when(answer('a1', 409, 1, 'claimed_elsewhere'));
    // Acknowledged (202, already handled), and nothing more.
    expect(summary(spec.when(frame('a1', 'A', 2)))).toEqual(['ack 202 a1']);
  });
});
