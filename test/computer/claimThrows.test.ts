/**
 * The board client answers a network failure as status 0 and never throws (adapters/http/boardClient.ts): a
 * claim that throws is a bug (or a token no header can carry), not a network error. It is answered as a
 * failed claim named `claim_threw`, so the lane retries it a bounded number of times and then skips it
 * saying so; the effect's record carries the error. Never a run held `claiming` for ever.
 */
import { describe, expect, it, vi } from 'vitest';
import { CLAIM_THREW, claimConsumer } from '../../apps/computer/claimConsumer.ts';
import { ComputerQueue } from '../../apps/computer/computerQueue.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { wordQueueReason } from '../../events/queueReasons.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import { openTempStore } from '../support/tempStore.ts';

const started: DomainEvent = {
  seq: 1,
  stream: 'c1/lane:A',
  version: 1,
  type: 'run.claim.started',
  data: { runId: 'r1', attempt: 1, incarnation: 'life-1' },
  at: 0,
  cause: null,
  actor: 'h:1',
};

describe('a claim that throws', () => {
  it("is answered as claim_threw, its error in the effect's record", async () => {
    const answered = vi.fn(async () => {});
    const consumer = claimConsumer(
      'c1',
      {
        claim: async () => {
          throw new TypeError("Cannot read properties of undefined (reading 'token')");
        },
      },
      answered,
    );
    const effect = consumer.effectOf(started);
    expect(effect).not.toBeNull();
    await expect(consumer.perform(effect!, started)).resolves.toEqual({
      ok: false,
      detail: "the claim call threw: Cannot read properties of undefined (reading 'token')",
    });
    expect(answered).toHaveBeenCalledWith({ stream: 'c1/lane:A', runId: 'r1', status: 0, code: CLAIM_THREW });
  });

  it('a network failure is still answered as status 0, which the lane retries', async () => {
    const answered = vi.fn(async () => {});
    const consumer = claimConsumer('c1', { claim: async () => ({ status: 0 }) }, answered);
    await consumer.perform(consumer.effectOf(started)!, started);
    expect(answered).toHaveBeenCalledWith({ stream: 'c1/lane:A', runId: 'r1', status: 0 });
  });

  it('never holds its run claiming: retried, then skipped naming it, across a restart too', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    let calls = 0;
    const board = {
      claim: async (): Promise<{ status: number }> => {
        calls++;
        throw new TypeError('boom');
      },
    };
    const life = async (incarnation: string) => {
      const system = startActorSystem({ onError: () => {} });
      const queue = new ComputerQueue(system, store, clock, 'c1', board);
      await queue.start({ stream: 'c1/computer:c1', type: 'computer.started', data: { incarnation, host: 'box', pid: 4242 }, at: clock.now() });
      return {
        queue,
        stop: () => {
          queue.stop();
          return stopSystem(system);
        },
      };
    };
    const first = await life('life-1');
    await first.queue.input({
      stream: 'c1/lane:A',
      type: 'frame.received',
      data: { frameId: 'f-r1', kind: 'run.requested', runId: 'r1', lane: 'A' },
      at: clock.now(),
    });
    await vi.waitFor(() => expect(calls).toBe(1), { timeout: 5_000 });
    // Its answer recorded before the life ends: a life stopped between the call and its answer calls again
    // (at least once), which is another test's (claimLives).
    await vi.waitFor(async () => expect((await store.readStream('c1/lane:A')).some((e) => e.type === 'claim.answered')).toBe(true), {
      timeout: 5_000,
    });
    await first.stop();
    const second = await life('life-2');
    // Each retry waits on the fake clock: move it on until the lane has skipped the run.
    const skipped = async () =>
      (await store.readStream('c1/lane:A')).flatMap((e) => (e.type === 'run.skipped' ? [wordQueueReason(e.data.reason)] : []));
    await vi.waitFor(
      async () => {
        clock.advance(60_000);
        expect(await skipped()).toEqual([`skipped: the claim failed 5 times (last: ${CLAIM_THREW})`]);
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(calls).toBe(5);
    expect(await second.queue.claimsInFlight()).toBe(0);
    await second.stop();
  });
});
