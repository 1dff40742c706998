import { describe, expect, it } from 'vitest';
import type { QueueDecision } from '../../actors/lane/decideQueue.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import { wordQueueReason } from '../../events/queueReasons.ts';
import { decisionOf } from '../support/deciderSpec.ts';
import { COMPUTER, input, queueSpec, summary, T0 } from '../support/queueSpec.ts';

const { configured, frame, answer } = input;

/** The board's word that another computer claimed a run it had offered this one too (README, push stream). */
const withdrawn = (runId: string, at = 0): NewEventOf<'frame.received'> => ({
  stream: `${COMPUTER}/computer:${COMPUTER}`,
  type: 'frame.received',
  data: { frameId: `w-${runId}-${at}`, kind: 'run.withdrawn', runId },
  at: T0 + at,
});
const reasonOf = (decisions: readonly QueueDecision[] | null) => wordQueueReason(decisionOf(decisions, 'frame.acknowledged').data.reason);

describe('queue: a run.withdrawn frame', () => {
  it('given a run waiting here for a slot, when it is withdrawn, then its copy leaves the queue at once (202)', () => {
    const spec = queueSpec(configured(1), frame('b1', 'B'), answer('b1', 200), frame('a1', 'A', 1));
    const decisions = spec.when(withdrawn('a1', 2));
    expect(summary(decisions)).toEqual(['ack 202 a1', 'withdrawn a1']);
    expect(wordQueueReason(decisionOf(decisions, 'run.withdrawn').data.reason)).toBe('withdrawn: another computer claimed it');
    expect(spec.state.runs.a1).toBeUndefined();
  });

  it('given a run parked here behind its lane, when it is withdrawn, then it no longer waits out its park', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 409, 1, 'conversation_busy'));
    expect(spec.state.runs.a1?.notBefore).toBeGreaterThan(T0);
    expect(summary(spec.when(withdrawn('a1', 2)))).toEqual(['ack 202 a1', 'withdrawn a1']);
    expect(spec.state.runs.a1).toBeUndefined();
  });

  it("given a run whose claim is in flight, or one running here, or none, then the frame changes nothing: the claim's answer settles it", () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'));
    const inFlight = spec.when(withdrawn('a1', 1));
    expect(summary(inFlight)).toEqual(['ack 202 a1']);
    expect(reasonOf(inFlight)).toBe("its claim is in flight: the board's answer settles it");
    spec.when(answer('a1', 200, 2));
    expect(summary(spec.when(withdrawn('a1', 3)))).toEqual(['ack 200 a1']);
    const ghost = spec.when(withdrawn('ghost', 4));
    expect(summary(ghost)).toEqual(['ack 200 ghost']);
    expect(reasonOf(ghost)).toBe('ignored: run ghost is not queued here');
  });
});
