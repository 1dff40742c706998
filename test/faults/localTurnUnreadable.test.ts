import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startLocalTurn } from '../../apps/computer/localTurn.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { T0 } from '../support/events.ts';
import { openTempStore, tempDir } from '../support/tempStore.ts';

describe('a local turn on a log it cannot read back', () => {
  it('given a disk that fails reading the run stream, then the turn fails at once with that error, not after the 30 s query timeout', async () => {
    const real = await openTempStore();
    const ioError = new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_READ');
    // The run actor folds its state from the run's stream before its first input: that read fails.
    const store: EventStore = new Proxy(real, {
      get: (target, key, receiver) => (key === 'readStream' ? async () => Promise.reject(ioError) : Reflect.get(target, key, receiver)),
    });
    const turn = startLocalTurn({
      store,
      clock: new FakeClock(T0),
      computer: 'local',
      runId: 'turn-1',
      lane: 'L',
      prompt: 'what broke?',
      exec: 'false',
      workspaceRoot: tempDir(),
      budgetS: 0,
      laneSession: null,
    });
    const started = performance.now();
    await expect(turn.result).rejects.toBe(ioError);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await real.headSeq()).toBe(0);
  }, 40_000);
});
