import { describe, expect, it } from 'vitest';
import type { QueueDecision } from '../../actors/lane/decideQueue.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import { wordQueueReason } from '../../events/queueReasons.ts';
import { decisionOf } from '../support/deciderSpec.ts';
import { COMPUTER, input, queueSpec, summary, T0 } from '../support/queueSpec.ts';

const { configured, frame, answer, ended } = input;

/** The board's push of a cancel of a run this computer holds (docs/rules.md#computer-behaviour). */
const cancelRequested = (runId: string, at = 0): NewEventOf<'frame.received'> => ({
  stream: `${COMPUTER}/computer:${COMPUTER}`,
  type: 'frame.received',
  data: { frameId: `x-${runId}-${at}`, kind: 'run.cancel_requested', runId },
  at: T0 + at,
});
const reasonOf = (decisions: readonly QueueDecision[] | null) => wordQueueReason(decisionOf(decisions, 'frame.acknowledged').data.reason);

describe('queue: a run.cancel_requested frame', () => {
  it('given a run claimed and running here, when its cancel is pushed, then the frame is accepted (202) for its run to stop', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 200));
    const decisions = spec.when(cancelRequested('a1', 1));
    expect(summary(decisions)).toEqual(['ack 202 a1']);
    expect(reasonOf(decisions)).toBe('held here: handed to its run, which stops it');
  });

  it('given a run not held here (unknown, or its execution already ended), when its cancel is pushed, then it is acknowledged 200 and ignored', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 200), ended('a1'));
    expect(summary(spec.when(cancelRequested('a1', 1)))).toEqual(['ack 200 a1']);
    const ghost = spec.when(cancelRequested('ghost', 2));
    expect(summary(ghost)).toEqual(['ack 200 ghost']);
    expect(reasonOf(ghost)).toBe('ignored: run ghost is not held here');
  });
});
