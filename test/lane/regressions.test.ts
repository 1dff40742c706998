import { describe, expect, it } from 'vitest';
import { input, queueSpec, summary } from '../support/queueSpec.ts';

const { configured, frame, answer, timer, ended } = input;
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

  // Seen in the wire bench on PostgreSQL (issue 17): a claim answered 503 log_contended waited its 2 s,
  // its timer fired with every slot taken, then a settle decided before the timer fired freed a slot.
  // A message carries its decision's `at` (here 2.9 s), earlier than the timer input folded before it
  // (3 s): the fold judged the retried run "not due yet" at 2.9 s and dropped its lane from the ready
  // heap, with no timer left to put it back. Its lane, and every later turn of it, waited for ever.
  it('given a claim retry whose timer fired while no slot was free, when a slot is freed by an input stamped before the timer, then the retry is claimed', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), frame('b1', 'B', 1));
    expect(summary(spec.when(answer('a1', 503, 1000, 'log_contended')))).toEqual(['retrying a1 attempts=1 +2000ms', 'claim b1 #1']);
    expect(summary(spec.when(answer('b1', 200, 1100)))).toEqual(['claimed b1']);
    expect(summary(spec.when(timer('a1', 3000)))).toEqual([]);
    expect(summary(spec.when(ended('b1', 2900)))).toEqual(['ended b1', 'claim a1 #2']);
  });
});
