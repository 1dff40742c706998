import { describe, expect, it, vi } from 'vitest';
import { addComputer } from '../../../actors/board/host/addComputer.ts';
import { startBoardServer } from '../../../actors/board/host/boardServer.ts';
import { systemClock } from '../../../actors/runtime/clock.ts';
import { startActorSystem, stopSystem } from '../../../actors/runtime/runtime.ts';
import { openTempStore } from '../../support/tempStore.ts';

describe('a computer added beside a running board', () => {
  it('given a board running in this process, when a computer is added on its log, then the board takes its token at once', async () => {
    const store = await openTempStore();
    const system = startActorSystem({ onError: () => {} });
    const server = await startBoardServer({
      system,
      store,
      clock: systemClock,
      host: '127.0.0.1',
      port: 0,
      boardSecret: 'secret',
      submitToken: 'submit',
    });
    try {
      const { token } = await addComputer(store, systemClock, 'c7');
      await vi.waitFor(async () => expect(await server.board.isComputerToken('c7', token)).toBe(true), { timeout: 5000 });
      expect(await server.board.isComputerToken('c7', 'not-its-token')).toBe(false);
    } finally {
      await server.close();
      stopSystem(system);
    }
  });
});
