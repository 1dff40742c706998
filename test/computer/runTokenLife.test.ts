import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { fixtureAgent, runStream, startRuns, waitForEvent } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore } from '../support/tempStore.ts';

describe('a run token asked for again after a restart', () => {
  it('is claimed in the name of the life that claimed the run: another life of this computer would be claimed_elsewhere', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    await store.append({
      expected: { 'c1/lane:L': 0 },
      events: [{ stream: 'c1/lane:L', type: 'run.claim.started', data: { runId: 'r1', attempt: 1, incarnation: 'life-1' }, at: clock.now() }],
    });
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'hello' });
    board.failCompletions('r1', 503);
    const first = await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh'), heartbeatMs: 60_000 });
    await first.claimAndHandOver('r1');
    await vi.waitFor(async () => expect((await store.readStream(runStream('r1'))).map((e) => e.type)).toContain('run.completion.retrying'), {
      timeout: 10_000,
    });
    first.crash();

    // The next life knows no token: the retry claims again, naming life-1.
    await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh'), heartbeatMs: 60_000 });
    clock.advance(1_000);
    expect((await waitForEvent(store, 'r1', 'run.settled')).data).toMatchObject({ reported: true });
    expect(board.callsOf('r1', 'claim').at(-1)).toEqual({ call: 'claim', runId: 'r1', incarnation: 'life-1' });
  });
});
