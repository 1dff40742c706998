import { describe, expect, it, vi } from 'vitest';
import { SHUTDOWN_BEFORE_START } from '../../actors/run/runState.ts';
import { drainComputer } from '../../apps/computer/drainComputer.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { wordQueueReason } from '../../events/queueReasons.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { fixtureAgent, runStream } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { startComputer } from '../support/standInComputer.ts';
import { openTempStore } from '../support/tempStore.ts';

async function all(store: EventStore): Promise<DomainEvent[]> {
  return store.readAll(0, 100_000);
}

async function acks(store: EventStore, runId: string): Promise<string[]> {
  return (await all(store)).flatMap((e) =>
    e.type === 'frame.acknowledged' && e.data.runId === runId ? [`${e.data.status} ${wordQueueReason(e.data.reason)}`] : [],
  );
}

describe('a computer with a stand-in board', () => {
  it('given a queued run cancelled on the board, then its run.cancelled frame withdraws it: nothing is claimed, run or posted for it', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('a1', { lane: 'A', prompt: 'first' }).offer('a2', { lane: 'A', prompt: 'second' });
    const release = board.holdClaim('a1');
    const { computer, frame } = await startComputer(store, clock, board, fixtureAgent('echo.sh'));

    await frame('run.requested', 'a1', 'A');
    await frame('run.requested', 'a2', 'A');
    expect((await computer.queue.state()).runs.a2?.status).toBe('waiting');
    await frame('run.cancelled', 'a2');
    expect(await acks(store, 'a2')).toEqual(['202 queued', '202 cancelled before it was claimed']);
    expect((await all(store)).filter((e) => e.type === 'run.withdrawn').map((e) => e.data)).toEqual([
      { runId: 'a2', reason: { code: 'withdrawn.cancelled' } },
    ]);

    release();
    await vi.waitFor(async () => expect((await all(store)).some((e) => e.type === 'run.ended' && e.data.runId === 'a1')).toBe(true), {
      timeout: 10_000,
    });
    clock.advance(60_000);
    await computer.queue.drainClaims();
    expect(board.callsOf('a2')).toEqual([]);
    expect(await store.readStream(runStream('a2'))).toEqual([]);
    expect(board.callsOf('a1', 'complete')).toMatchObject([{ result: { ok: true } }]);
    expect((await computer.queue.state()).runs.a2).toBeUndefined();
  });

  it('given a claim granted after the drain began, then that run never starts and is completed with the shutdown marker; a new frame is answered 503', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('b1', { lane: 'B', prompt: 'p' }).offer('b2', { lane: 'C', prompt: 'q' });
    const release = board.holdClaim('b1');
    const { computer, frame } = await startComputer(store, clock, board, fixtureAgent('echo.sh'));

    await frame('run.requested', 'b1', 'B');
    await vi.waitFor(() => expect(board.callsOf('b1', 'claim').length).toBe(1));
    let drained = false;
    const draining = drainComputer(computer, clock, 60_000, () => {}).then(() => (drained = true));
    await vi.waitFor(async () => expect((await computer.queue.state()).draining).toBe(true));
    await frame('run.requested', 'b2', 'C');
    expect(await acks(store, 'b2')).toEqual(['503 draining']);
    // The claim that was in flight when the drain began is still owed an answer: the drain waits for it.
    await new Promise((r) => setTimeout(r, 150));
    expect(drained).toBe(false);

    release();
    await draining;
    const b1 = await store.readStream(runStream('b1'));
    expect(b1.map((e) => e.type)).not.toContain('run.process.began');
    expect(board.callsOf('b1', 'complete')).toMatchObject([{ result: { ok: false, error: SHUTDOWN_BEFORE_START } }]);
    expect(b1.at(-1)).toMatchObject({ type: 'run.settled', data: { reported: true } });
    // Its queue reads why it ended from that settle, its own input.
    const ended = async () => (await all(store)).filter((e) => e.type === 'run.ended' && e.data.runId === 'b1');
    await vi.waitFor(async () => expect(await ended()).toHaveLength(1));
    expect(await ended()).toMatchObject([{ cause: b1.at(-1)!.seq, data: { ok: false, reason: { code: 'failed', error: SHUTDOWN_BEFORE_START } } }]);
    expect(board.callsOf('b2')).toEqual([]);
    expect(computer.runs.liveRuns()).toEqual([]);
  });

  it('given a claim answered while the drain counts the claims in flight, then the drain still waits for its run: it ends only once the run is completed with the shutdown marker', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('b1', { lane: 'B', prompt: 'p' });
    const releaseClaim = board.holdClaim('b1');
    const releaseCompletion = board.holdCompletions('b1');
    const { computer, frame } = await startComputer(store, clock, board, fixtureAgent('echo.sh'));

    await frame('run.requested', 'b1', 'B');
    await vi.waitFor(() => expect(board.callsOf('b1', 'claim').length).toBe(1));
    // The order the race needs, every time: the drain's second look at the claims in flight is answered
    // only once the granted claim's run is handed over (its answer committed while the look waited),
    // and its completion is answered only at a later look: a drain that ends at the second has not waited for it.
    const count = computer.queue.claimsInFlight.bind(computer.queue);
    let looks = 0;
    computer.queue.claimsInFlight = async () => {
      looks++;
      if (looks === 2) {
        releaseClaim();
        await vi.waitFor(() => expect(board.callsOf('b1', 'complete')).toHaveLength(1));
      }
      if (looks === 3) releaseCompletion();
      return count();
    };
    const pause = () => new Promise<void>((r) => setTimeout(r, 5));
    await drainComputer(computer, clock, 60_000, () => {}, 'shutdown signal', pause);
    expect(board.callsOf('b1', 'complete')).toMatchObject([{ result: { ok: false, error: SHUTDOWN_BEFORE_START } }]);
    expect((await store.readStream(runStream('b1'))).at(-1)).toMatchObject({ type: 'run.settled', data: { reported: true } });
    expect(computer.runs.liveRuns()).toEqual([]);
  });

  it("given two runs of one lane and a completion the board is slow to answer, then the second is claimed only once the first's completion is answered: never busy, never parked", async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().serialiseLanes().offer('a1', { lane: 'A', prompt: 'first' }).offer('a2', { lane: 'A', prompt: 'second' });
    const release = board.holdCompletions('a1');
    const { computer, frame } = await startComputer(store, clock, board, fixtureAgent('echo.sh'));

    await frame('run.requested', 'a1', 'A');
    await frame('run.requested', 'a2', 'A');
    await vi.waitFor(() => expect(board.callsOf('a1', 'complete')).toHaveLength(1), { timeout: 10_000 });
    // The board holds lane A's turn open until a1's completion reaches it: a claim of a2 now would be
    // answered conversation_busy and parked for 30 s. Time for a premature claim to show up.
    await new Promise((r) => setTimeout(r, 200));
    expect(board.callsOf('a2', 'claim')).toEqual([]);
    const held = await computer.queue.state();
    expect([held.runs.a1?.status, held.runs.a2?.status]).toEqual(['running', 'waiting']);

    release();
    await vi.waitFor(() => expect(board.callsOf('a2', 'complete')).toMatchObject([{ result: { ok: true } }]), { timeout: 10_000 });
    const claims = board.calls.filter((c) => c.call === 'claim').map((c) => c.runId);
    expect(claims).toEqual(['a1', 'a2']);
    expect(board.calls.findIndex((c) => c.call === 'claim' && c.runId === 'a2')).toBeGreaterThan(
      board.calls.findIndex((c) => c.call === 'complete' && c.runId === 'a1'),
    );
    expect(board.busyAnswers).toEqual([]);
    expect((await all(store)).filter((e) => e.type === 'run.parked')).toEqual([]);
  });

  it('given one slot and a completion the board is slow to answer, then a run of another lane waits for that answer too: the slot is held until the run settles', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('a1', { lane: 'A', prompt: 'first' }).offer('b1', { lane: 'B', prompt: 'other' });
    const release = board.holdCompletions('a1');
    const { computer, frame } = await startComputer(store, clock, board, fixtureAgent('echo.sh'));

    await frame('run.requested', 'a1', 'A');
    await vi.waitFor(() => expect(board.callsOf('a1', 'complete')).toHaveLength(1), { timeout: 10_000 });
    await frame('run.requested', 'b1', 'B');
    await new Promise((r) => setTimeout(r, 200));
    expect(board.callsOf('b1')).toEqual([]);
    expect((await computer.queue.state()).inUse).toBe(1);

    release();
    await vi.waitFor(() => expect(board.callsOf('b1', 'complete')).toMatchObject([{ result: { ok: true } }]), { timeout: 10_000 });
    // The first run's slot went back once, when it settled: not again at any later point.
    await vi.waitFor(async () =>
      expect((await all(store)).filter((e) => e.type === 'run.ended').map((e) => e.type === 'run.ended' && e.data.runId)).toEqual(['a1', 'b1']),
    );
  });
});
