import { describe, expect, it } from 'vitest';
import { input, queueSpec, summary } from '../support/queueSpec.ts';

const { configured, frame, answer } = input;
const BUSY = 'conversation_busy';

/** Rules the property test (queue.property.test.ts) once found broken, each pinned by its shrunk case. */
describe('queue: regressions', () => {
  it('given a claim in flight, when a frame for another computer names the run, then it is ignored and a busy answer still parks the run', () => {
    const spec = queueSpec(configured(1), frame('r1', 'L0', 5000));
    expect(summary(spec.when(frame('r1', 'L0', 10_000, { computerId: 'c2' })))).toEqual(['ack 200 r1']);
    expect(spec.state.runs.r1!.resentWhileClaiming).toBe(false);
    expect(summary(spec.when(answer('r1', 409, 10_001, BUSY)))).toEqual(['parked r1 waits=1 +30000ms logged']);
  });

  it('given a claim in flight, when its frame comes again addressed to this computer by name, then the busy answer is stale', () => {
    const spec = queueSpec(configured(1), frame('r1', 'L0'), frame('r1', 'L0', 1, { computerId: 'c1' }));
    expect(summary(spec.when(answer('r1', 409, 2, BUSY)))).toEqual(['requeued r1', 'claim r1 #1']);
  });
});
