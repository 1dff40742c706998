/**
 * An idle board sleeps (docs/architecture.md#an-idle-process-sleeps): its push hub looks at offers awaiting their
 * ack only while there are some, so with no offer out its one timer is the sockets' ping.
 */
import { describe, expect, it } from 'vitest';
import { PushHub } from '../../../adapters/push/pushHub.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';

describe('the push hub at rest', () => {
  it('given no offer awaiting its ack, then the only timer it holds is the ping', () => {
    const clock = new FakeClock();
    const hub = new PushHub(
      { connected: async () => true, disconnected: async () => {}, declined: async () => {}, refused: () => {} },
      clock,
      () => {},
    );
    clock.advance(60_000);
    expect(clock.pendingTimers()).toBe(1);
    hub.close();
    expect(clock.pendingTimers()).toBe(0);
  });
});
