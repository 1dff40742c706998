/**
 * A wait that falls due while the log cannot be written (a full disk) is woken once, and its wake-up is
 * retried until the log takes it: never re-armed meanwhile. Found by the simulator (seed 110): each
 * failed append made the queue actor fold its state again, the fold re-armed every overdue wait at
 * 0 ms, each firing recorded another wake-up that failed in turn, and the computer spun for the whole
 * outage, piling up retrying inputs (tens of thousands of timers within a virtual second).
 */
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import type { BoardClaims } from '../../apps/computer/claimConsumer.ts';
import { ComputerQueue } from '../../apps/computer/computerQueue.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import { openTempStore } from '../support/tempStore.ts';

const BUSY = { status: 409, body: { detail: { error: 'conversation_busy' } } };

describe('a wait due during a disk outage', () => {
  it('given a parked run whose wait ends while appends fail, then it is woken once and its wake-up retried, not re-armed in a loop; once the disk is back it is claimed', async () => {
    let full = false;
    let refused = 0;
    const store = await openTempStore(undefined, {
      report: () => {},
      faults: {
        failWrites: () => {
          if (!full) return null;
          refused++;
          return new Database.SqliteError('database or disk is full', 'SQLITE_FULL');
        },
      },
    });
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const calls: string[] = [];
    const board: BoardClaims = {
      claim: async (runId) => {
        calls.push(runId);
        return calls.length === 1
          ? BUSY
          : { status: 200, body: { run: { run_id: runId, lane: 'A', prompt: 'p', agent_id: null, timeout_s: null }, run_token: 't', skills: [] } };
      },
    };
    const system = startActorSystem({ onError: () => {} });
    const queue = new ComputerQueue(system, store, clock, 'c1', board, { log: () => {} });
    await queue.start();
    await queue.input({
      stream: 'c1/lane:A',
      type: 'frame.received',
      data: { frameId: 'f1', kind: 'run.requested', runId: 'r1', lane: 'A' },
      at: clock.now(),
    });
    await vi.waitFor(async () => expect((await queue.state()).runs.r1?.busyWaits).toBe(1));

    full = true;
    clock.advance(30_000);
    // A virtual second of outage, in small steps: the event loop runs between them.
    for (let i = 0; i < 100; i++) {
      clock.advance(10);
      for (let t = 0; t < 5; t++) await new Promise((r) => setImmediate(r));
    }
    // The wake-up's retries (100 ms doubling) and nothing more: a few, not hundreds.
    expect(refused).toBeLessThan(20);
    expect(clock.pendingTimers()).toBeLessThan(10);

    full = false;
    clock.advance(10_000);
    await vi.waitFor(async () => expect((await queue.state()).runs.r1?.status).toBe('running'));
    queue.stop();
    stopSystem(system);
  });
});
