/**
 * The board client answers a network failure as status 0 and never throws (wire/boardClient.ts): a
 * claim that throws is a bug, not a network error. It fails the claim's effect with its message (the
 * outbox records it), instead of being answered as "network error, try again" until the attempts run out.
 */
import { describe, expect, it, vi } from 'vitest';
import { claimConsumer } from '../../actors/computer/claimConsumer.ts';
import type { DomainEvent } from '../../events/catalog.ts';

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
  it('fails with its error, and is not answered as a network error', async () => {
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
    await expect(consumer.perform(effect!, started)).rejects.toThrow(/reading 'token'/);
    expect(answered).not.toHaveBeenCalled();
  });

  it('a network failure is still answered as status 0, which the lane retries', async () => {
    const answered = vi.fn(async () => {});
    const consumer = claimConsumer('c1', { claim: async () => ({ status: 0 }) }, answered);
    await consumer.perform(consumer.effectOf(started)!, started);
    expect(answered).toHaveBeenCalledWith({ stream: 'c1/lane:A', runId: 'r1', status: 0 });
  });
});
