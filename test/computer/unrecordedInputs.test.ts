/**
 * An input sent without waiting for its commit (a timer's) that cannot be recorded is told: one line
 * naming the input and the error, never swallowed.
 */
import { describe, expect, it, vi } from 'vitest';
import { ComputerQueue } from '../../actors/computer/computerQueue.ts';
import { FakeClock } from '../../actors/runtime/clock.ts';
import { startActorSystem, stopSystem } from '../../actors/runtime/runtime.ts';
import type { SqliteEventStore } from '../../events/store/sqlite/sqliteEventStore.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore } from '../support/tempStore.ts';

describe('an input sent without waiting', () => {
  it('a timer input the log refuses (not for a full disk) is one logged line naming it and the error', async () => {
    const store = await openTempStore();
    // The store refuses the timer's input with an error that is no outage: it cannot be waited out.
    const refusing = Object.create(store) as SqliteEventStore;
    refusing.append = (request) =>
      request.events.some((e) => e.type === 'timer.fired') ? Promise.reject(new Error('the row is refused by a test')) : store.append(request);
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'A', prompt: 'hi' });
    board.loseNextAnswer('r1');
    const lines: string[] = [];
    const system = startActorSystem({ onError: () => {} });
    const queue = new ComputerQueue(system, refusing, clock, 'c1', board, { log: (line) => lines.push(line) });
    await queue.start();
    await queue.input({
      stream: 'c1/lane:A',
      type: 'frame.received',
      data: { frameId: 'f-r1', kind: 'run.requested', runId: 'r1', lane: 'A' },
      at: clock.now(),
    });
    await vi.waitFor(async () => expect((await queue.state()).runs.r1?.claimAttempts).toBe(1), { timeout: 5_000 });

    clock.advance(2_000);

    await vi.waitFor(() => expect(lines).toEqual(['timer.fired of run r1 (c1/lane:A) could not be recorded: the row is refused by a test']), {
      timeout: 5_000,
    });
    queue.stop();
    stopSystem(system);
  });
});
