import { boardDecider } from '../../actors/board/boardDecider.ts';
import { boardInput } from '../../actors/board/boardInputs.ts';
import type { BoardState } from '../../actors/board/boardState.ts';
import { decideAndAppend } from '../../runtime/actors/decideAndAppend.ts';
import { openSqliteStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { T0 } from './queueSpec.ts';

/**
 * A board's log at `db` holding runs submitted (as the board decides them) under ids the test chose:
 * the board draws random ones, and a test of prefixes needs two that share their start. Run i is in
 * lane `lane-i`.
 */
export async function seedSubmittedRuns(db: string, runIds: readonly string[]): Promise<void> {
  const store = await openSqliteStore(db);
  try {
    const versions = new Map<string, number>();
    let state: BoardState = boardDecider.initialState('board');
    for (const [i, runId] of runIds.entries()) {
      const submitted = boardInput.submitted({ runId, lane: `lane-${i}`, prompt: 'hello', agentId: null, timeoutS: null }, T0 + i);
      const outcome = await decideAndAppend(store, boardDecider, state, submitted, versions, (s) => store.streamVersion(s));
      if (!outcome.ok) throw outcome.conflict;
      state = outcome.state;
    }
  } finally {
    await store.close();
  }
}
