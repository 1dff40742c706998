/**
 * An input sent without waiting for its commit (a timer's) that cannot be recorded is told: one line
 * naming the input and the error, never swallowed.
 */
import { describe, expect, it, vi } from 'vitest';
import { agentKindOf } from '../../actors/run/resume.ts';
import { ComputerQueue } from '../../apps/computer/computerQueue.ts';
import { spawnConsumer } from '../../apps/computer/runEffects.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { FakeClock, systemClock } from '../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import type { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore, tempDir } from '../support/tempStore.ts';

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

  it('an agent whose start could not be recorded still has its exit recorded: the run never waits for an exit nobody tells', async () => {
    const inputs: string[] = [];
    const lines: string[] = [];
    const spawn = spawnConsumer({
      computer: 'c1',
      store: await openTempStore(),
      clock: systemClock,
      exec: 'true',
      kind: agentKindOf('true'),
      workspaceRoot: tempDir(),
      killGraceMs: 100,
      budgetNote: true,
      handles: new Map(),
      input: async (_runId, event) => {
        inputs.push(event.type);
        if (event.type === 'run.process.began') throw new Error('the stream kept changing');
      },
      runToken: async () => null,
      phaseOf: () => 'requested',
      promptOf: () => 'hi',
      log: (line) => lines.push(line),
      board: { reply: async () => ({ status: 0 }), complete: async () => ({ status: 0 }) },
    });
    const at = Date.now();
    const requested = {
      seq: 1,
      version: 1,
      stream: 'c1/run:r1',
      type: 'run.execution.requested',
      at,
      cause: null,
      actor: 'h:1',
      data: { runId: 'r1', lane: 'L', deadlineAt: at + 60_000, resume: null },
    } satisfies DomainEvent;
    await spawn.perform(requested, requested);
    await vi.waitFor(() => expect(inputs).toEqual(['run.process.began', 'run.process.exited']), { timeout: 5_000 });
    expect(lines).toEqual(['run.process.began of run r1 (c1/run:r1) could not be recorded: the stream kept changing']);
  });
});
