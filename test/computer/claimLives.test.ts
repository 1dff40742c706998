/**
 * A claim speaks for the life that may hold its run (docs/rules.md#computer-behaviour, "Incarnations"): a retry of it in
 * a later life of the daemon still names the life of the first claim, which the board may have granted.
 */
import { describe, expect, it, vi } from 'vitest';
import { ComputerQueue } from '../../apps/computer/computerQueue.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore } from '../support/tempStore.ts';

/** One life of the computer's queue: it starts by recording its `computer.started`. */
async function life(store: EventStore, clock: FakeClock, board: StandInBoard, incarnation: string) {
  const system = startActorSystem({ onError: () => {} });
  const queue = new ComputerQueue(system, store, clock, 'c1', board);
  await queue.start({ stream: 'c1/computer:c1', type: 'computer.started', data: { incarnation, host: 'box', pid: 4242 }, at: clock.now() });
  return {
    queue,
    stop: () => {
      queue.stop();
      return stopSystem(system);
    },
  };
}

describe('a claim retried across a restart', () => {
  it("a claim granted to life 1 whose answer was lost is retried by life 2 in life 1's name, and the run is claimed", async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().holdPerLife().offer('r1', { lane: 'A', prompt: 'hi' });
    board.loseNextAnswer('r1');

    const first = await life(store, clock, board, 'life-1');
    await first.queue.input({
      stream: 'c1/lane:A',
      type: 'frame.received',
      data: { frameId: 'f-r1', kind: 'run.requested', runId: 'r1', lane: 'A' },
      at: clock.now(),
    });
    await vi.waitFor(async () => expect((await first.queue.state()).runs.r1?.claimAttempts).toBe(1), { timeout: 5_000 });
    first.stop();

    const second = await life(store, clock, board, 'life-2');
    clock.advance(2_000);
    await vi.waitFor(async () => expect((await second.queue.state()).runs.r1?.status).toBe('running'), { timeout: 5_000 });
    expect(board.callsOf('r1', 'claim').map((c) => (c.call === 'claim' ? c.incarnation : null))).toEqual(['life-1', 'life-1']);
    second.stop();
  });
});
