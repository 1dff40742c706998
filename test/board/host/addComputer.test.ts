import { describe, expect, it, vi } from 'vitest';
import { addComputer } from '../../../apps/board/addComputer.ts';
import { systemClock } from '../../../runtime/actors/clock.ts';
import { liveBoard } from './liveBoard.ts';

describe('a computer added beside a running board', () => {
  it('given a board running in this process, when a computer is added on its log, then the board takes its token at once', async () => {
    const { server, store } = await liveBoard();
    const { token } = await addComputer(store, systemClock, 'c7');
    await vi.waitFor(async () => expect(await server.board.isComputerToken('c7', token)).toBe(true), { timeout: 5000 });
    expect(await server.board.isComputerToken('c7', 'not-its-token')).toBe(false);
  });
});
