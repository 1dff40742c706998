import { describe, expect, it } from 'vitest';
import { addComputer } from '../../../apps/board/addComputer.ts';
import { systemClock } from '../../../runtime/actors/clock.ts';
import { openTempStore } from '../../support/tempStore.ts';
import { liveBoard } from './liveBoard.ts';

describe('a computer added beside a running board', () => {
  it('given a board running in this process, when a computer is added on its log, then the board takes its token at once', async () => {
    const { server, store } = await liveBoard();
    const { token } = await addComputer(store, systemClock, 'c7');
    expect(await server.board.isComputerToken('c7', token)).toBe(true);
    expect(await server.board.isComputerToken('c7', 'not-its-token')).toBe(false);
  });

  it('given a board running, when another process adds a computer on its log (`runledger computer add`) and the computer connects at once, then the board takes its token before its follow of the log has seen it', async () => {
    const { server, path } = await liveBoard();
    const other = await openTempStore(path, { sync: 'normal' });
    const { token } = await addComputer(other, systemClock, 'c8');
    expect(await server.board.isComputerToken('c8', token)).toBe(true);
    expect(await server.board.isComputerToken('c8', 'not-its-token')).toBe(false);
    expect(await server.board.isComputerToken('c9', token)).toBe(false);
  });
});
