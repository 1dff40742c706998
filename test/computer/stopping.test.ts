import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { fixtureAgent, startRuns } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore } from '../support/tempStore.ts';

describe('a computer stopped while an effect is in flight', () => {
  it('given a completion call still waiting on the board when the daemon closes its log, then the effect ends quietly: nothing is left to reject unhandled', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const store = await openTempStore();
      const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'hi' });
      const release = board.holdCompletions('r1');
      const { runs, claimAndHandOver, crash } = await startRuns(store, new FakeClock(), board, { exec: fixtureAgent('echo.sh') });
      await claimAndHandOver('r1');
      await vi.waitFor(() => expect(board.callsOf('r1', 'complete')).toHaveLength(1), { timeout: 10_000 });

      // What the daemon's close does: stop the computer, then close the log.
      runs.stop();
      crash();
      await store.close();
      release();
      await new Promise((r) => setTimeout(r, 200));
      expect(rejections.map(String)).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
});
