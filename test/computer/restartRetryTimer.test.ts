/**
 * A completion a crash cut is sent again as the next life's outboxes open, and its answer may be
 * recorded before the start is done: a failure then schedules the next attempt (run.completion.retrying,
 * its timer armed). The start must not put back, after that, the timer of the retry the log held when it
 * began (already due): that replaced the new timer, fired at once into a due the decider ignores (the
 * retry ahead is the new one), and the completion was never sent again while the run was heartbeated for
 * ever. Found by the simulator (two boards, seed 34 with `crash,net`: the token's claim timed out).
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { fixtureAgent, runStream, startRuns, typesOf, waitForEvent } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore } from '../support/tempStore.ts';

describe('a completion cut by a crash, answered as the next life starts', () => {
  it('given its resend failing during the start (the token’s claim answer lost), then the retry it schedules is armed and sent: the run is reported', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'hello' });
    board.failCompletions('r1', 503);
    const first = await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh'), heartbeatMs: 600_000 });
    await first.claimAndHandOver('r1');
    const retrying = await waitForEvent(store, 'r1', 'run.completion.retrying');
    // The second attempt goes, and the process dies before its answer.
    const release = board.holdCompletions('r1');
    clock.advance(retrying.data.notBefore - clock.now());
    await waitForEvent(store, 'r1', 'run.completion.due');
    await expect.poll(() => board.callsOf('r1', 'complete').length, { timeout: 5_000 }).toBe(2);
    first.crash();
    release();

    // The next life knows no token: its claim is granted, the answer lost (status 0), so the resend fails.
    board.loseNextAnswer('r1');
    await startRuns(store, clock, board, { exec: fixtureAgent('echo.sh'), heartbeatMs: 600_000 });
    const types = await typesOf(store, 'r1');
    expect(types.filter((t) => t === 'run.completion.retrying').length).toBe(2);
    const again = (await store.readStream(runStream('r1'))).filter((e) => e.type === 'run.completion.retrying').at(-1)!;
    if (again.type !== 'run.completion.retrying') throw new Error('not a retry');
    clock.advance(again.data.notBefore - clock.now());
    expect((await waitForEvent(store, 'r1', 'run.settled', 5_000)).data).toMatchObject({ reported: true });
  });
});
