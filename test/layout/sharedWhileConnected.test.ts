/**
 * The browser tests share one Chromium a worker (test/web/workerChromium.ts): a browser that went away
 * or a launch that failed must not be handed to the next file, which would fail for another's reason.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sharedWhileConnected } from '../support/sharedWhileConnected.ts';

/** Emits 'disconnected' as playwright's Browser does, with a number to tell launches apart. */
class Made extends EventEmitter {
  constructor(readonly launch: number) {
    super();
  }
}

function counted(fail: (launch: number) => boolean = () => false) {
  let launches = 0;
  const shared = sharedWhileConnected(async () => {
    launches += 1;
    if (fail(launches)) throw new Error(`launch ${launches} failed`);
    return new Made(launches);
  });
  return { shared, launches: () => launches };
}

describe('one of a kind, shared while it lives', () => {
  it('given uses one after another and at once, then all get the one launch', async () => {
    const { shared, launches } = counted();
    const [a, b] = await Promise.all([shared(), shared()]);
    expect(await shared()).toBe(a);
    expect(b).toBe(a);
    expect(launches()).toBe(1);
  });

  it('given it went away, then the next use gets a new one, and the uses after it that one', async () => {
    const { shared, launches } = counted();
    const first = await shared();
    first.emit('disconnected');
    const second = await shared();
    expect(second.launch).toBe(2);
    expect(await shared()).toBe(second);
    expect(launches()).toBe(2);
  });

  it('given a launch that failed, then the next use launches again instead of getting the failure', async () => {
    const { shared } = counted((launch) => launch === 1);
    await expect(shared()).rejects.toThrow('launch 1 failed');
    expect((await shared()).launch).toBe(2);
  });

  it('given an old one that goes away after it was replaced, then the new one is kept', async () => {
    const { shared } = counted();
    const first = await shared();
    first.emit('disconnected');
    const second = await shared();
    first.emit('disconnected');
    expect(await shared()).toBe(second);
  });
});
