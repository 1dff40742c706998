import { describe, expect, it } from 'vitest';
import { startBoardServer } from '../../../apps/board/boardServer.ts';
import { systemClock } from '../../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../../runtime/actors/runtime.ts';
import { openTempStore } from '../../support/tempStore.ts';

describe('a board whose start fails part way', () => {
  it('given its web view failing to start, then the start fails naming why, and nothing of the board reads the log once it is closed', async () => {
    const store = await openTempStore();
    const system = startActorSystem({ onError: () => {} });
    const errors: unknown[] = [];
    const record = (error: unknown) => errors.push(error);
    process.on('uncaughtException', record);
    try {
      await expect(
        startBoardServer({
          system,
          store,
          clock: systemClock,
          host: '127.0.0.1',
          port: 0,
          boardSecret: 'secret',
          submitToken: 'submit',
          web: () => {
            throw new Error('no static folder');
          },
        }),
      ).rejects.toThrow('no static folder');
      await store.close();
      // Past a poll of the log (every 250 ms): a follower left behind would read the closed log then.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(errors).toEqual([]);
    } finally {
      process.off('uncaughtException', record);
      stopSystem(system);
    }
  });
});
