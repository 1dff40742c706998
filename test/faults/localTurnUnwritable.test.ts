import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startLocalTurn } from '../../apps/computer/localTurn.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import { T0 } from '../support/events.ts';
import { openTempStore, tempDbPath, tempDir } from '../support/tempStore.ts';

describe('a local turn on a log that cannot take its inputs', () => {
  it('given a full disk, then the turn fails at once with the LogUnwritableError (a person waits on `runledger run`), and nothing is spawned or written', async () => {
    const store = await openTempStore(tempDbPath(), {
      faults: { failWrites: () => new Database.SqliteError('database or disk is full', 'SQLITE_FULL') },
    });
    const clock = new FakeClock(T0);
    const turn = startLocalTurn({
      store,
      clock,
      computer: 'local',
      runId: 'turn-1',
      lane: 'L',
      prompt: 'what broke?',
      exec: 'false',
      workspaceRoot: tempDir(),
      budgetS: 0,
      laneSession: null,
    });

    await expect(turn.result).rejects.toBeInstanceOf(LogUnwritableError);
    // Refused, not waited out: no retry is pending on the clock.
    expect(clock.pendingTimers()).toBe(0);
    expect(await store.headSeq()).toBe(0);
  });
});
