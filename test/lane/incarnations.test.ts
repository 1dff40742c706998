import { describe, expect, it } from 'vitest';
import type { QueueInput } from '../../actors/lane/decideQueue.ts';
import { COMPUTER, input, queueSpec, summary, T0 } from '../support/queueSpec.ts';

const { configured, held, drain, frame, answer } = input;

/** The start of one life of the daemon (docs/rules.md#computer-behaviour, "Incarnations"). */
function started(incarnation: string, at = 0): QueueInput {
  return { stream: `${COMPUTER}/computer:${COMPUTER}`, type: 'computer.started', data: { incarnation, host: 'box', pid: 4242 }, at: T0 + at };
}

describe('queue: what belongs to one life of the daemon ends with it', () => {
  it('given a drain, when the next life starts, then a frame is queued and claimed, not answered 503', () => {
    const spec = queueSpec(started('life-1'), configured(1), drain(10));
    expect(summary(spec.when(frame('r1', 'A', 20)))).toEqual(['ack 503 r1']);
    spec.when(started('life-2', 30));
    expect(summary(spec.when(frame('r2', 'A', 40)))).toEqual(['ack 202 r2', 'queued r2', 'claim r2 #1']);
  });

  it('given runs left waiting by a drain, when the next life starts, then they are claimed at once', () => {
    const spec = queueSpec(started('life-1'), configured(1), held(true, 1), frame('r1', 'A', 2), drain(3), held(false, 4));
    expect(summary(spec.when(started('life-2', 10)))).toEqual(['claim r1 #1']);
  });

  it('given a claim in flight when a draining life ended, when the next life hears its 503, then the claim is retried, not skipped', () => {
    const spec = queueSpec(started('life-1'), configured(1), frame('r1', 'A', 1), drain(2), started('life-2', 10));
    expect(summary(spec.when(answer('r1', 503, 11)))).toEqual(['retrying r1 attempts=1 +2000ms']);
  });

  it('given a scheduler held by the user, when the next life starts, then it stays held', () => {
    const spec = queueSpec(started('life-1'), configured(1), held(true, 1), drain(2));
    expect(summary(spec.when(started('life-2', 10)))).toEqual([]);
    expect(summary(spec.when(frame('r1', 'A', 20)))).toEqual(['ack 202 r1', 'queued r1']);
    expect(spec.state.held).toBe(true);
  });

  it("given a life started, when a claim starts, then it carries that life's incarnation", () => {
    const spec = queueSpec(started('life-1'), configured(1));
    expect(spec.when(frame('r1', 'A', 5))!.find((d) => d.type === 'run.claim.started')!.data).toEqual({
      runId: 'r1',
      attempt: 1,
      incarnation: 'life-1',
    });
  });

  it('given no computer.started (a log of an older version), when a claim starts, then it carries no incarnation', () => {
    const spec = queueSpec(configured(1));
    expect(spec.when(frame('r1', 'A', 5))!.find((d) => d.type === 'run.claim.started')!.data).toEqual({ runId: 'r1', attempt: 1 });
  });
  it("given a claim of life 1 whose answer was lost, when life 2 retries it, then the retry carries life 1's incarnation", () => {
    const spec = queueSpec(started('life-1'), configured(1), frame('r1', 'A', 1), answer('r1', 0, 2), started('life-2', 10));
    const retry = spec.when(input.timer('r1', 5000))!.find((d) => d.type === 'run.claim.started')!;
    expect(retry.data).toEqual({ runId: 'r1', attempt: 2, incarnation: 'life-1' });
  });

  it('given a run first claimed by a log of an older version, when a later life retries it, then it carries no incarnation', () => {
    const spec = queueSpec(configured(1), frame('r1', 'A', 1), answer('r1', 0, 2), started('life-2', 10));
    expect(spec.when(input.timer('r1', 5000))!.find((d) => d.type === 'run.claim.started')!.data).toEqual({ runId: 'r1', attempt: 2 });
  });

  it('given a checkpoint of an older version (no incarnation in it), when a claim starts, then it carries no incarnation', () => {
    const spec = queueSpec(configured(1));
    delete (spec.state as Partial<typeof spec.state>).incarnation;
    expect(spec.when(frame('r1', 'A', 5))!.find((d) => d.type === 'run.claim.started')!.data).toStrictEqual({ runId: 'r1', attempt: 1 });
  });
});
