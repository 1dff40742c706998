/**
 * A completion that reached the board just before the computer was killed (the board finished the run;
 * its answer was never recorded) is sent again by the next life, which knows no run token and claims
 * the run again for it: the board answers that claim 410, the run being terminal there. The run is then
 * settled as one the board already holds as terminal. It was sent with the word `gone` as its run token
 * instead, answered 401, and retried with a growing wait, for ever (seen in the crash-restart bench:
 * a restarted daemon's first runs waited seconds for slots held by such retries).
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { fixtureAgent, startRuns, typesOf, waitForEvent } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore } from '../support/tempStore.ts';

describe('a completion the board took just before a crash', () => {
  it('given the next life claiming it again for a token and told 410, then the run settles as terminal on the board, with no completion sent without a token', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'hello' });
    const release = board.holdCompletions('r1');
    const first = await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh'), heartbeatMs: 600_000 });
    await first.claimAndHandOver('r1');
    await expect.poll(() => board.callsOf('r1', 'complete').length, { timeout: 5_000 }).toBe(1);
    // The board finishes the run, and the process dies before the answer is recorded.
    first.crash();
    board.resolve('r1');
    release();

    await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh'), heartbeatMs: 600_000 });
    expect((await waitForEvent(store, 'r1', 'run.settled', 5_000)).data).toMatchObject({ reported: true });
    expect((await typesOf(store, 'r1')).filter((t) => t === 'run.completion.retrying')).toEqual([]);
    // Every completion carried the run's own token.
    for (const call of board.callsOf('r1', 'complete')) expect(call).toMatchObject({ token: board.tokenOf('r1') });
  });
});
