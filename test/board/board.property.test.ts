import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boardDecider } from '../../actors/board/boardDecider.ts';
import { type BoardState, initialBoardState } from '../../actors/board/boardState.ts';
import type { BoardDecision, BoardInput } from '../../actors/board/decideBoard.ts';
import { wordBoardReason } from '../../events/boardReasons.ts';
import { boardProjection } from '../../projections/board.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { decideAndAppend } from '../../runtime/actors/decideAndAppend.ts';
import { hydrateProjections } from '../../runtime/folds/hydrate.ts';
import { rebuildProjections } from '../../runtime/folds/keeper/rebuild.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';
import { json, type Recorded, recordedHistory, type StepModel } from '../support/deciderSpec.ts';
import { openTempStore } from '../support/tempStore.ts';
import { BoardModel } from './boardModel.ts';
import { computersArb, ScenarioWriter, type Step, stepArb } from './boardScenario.ts';
import { StreamLog, withPast } from './boardSpec.ts';

function runInMemory(
  computers: number,
  steps: readonly Step[],
): { history: Recorded<BoardInput, BoardDecision>[]; state: BoardState; model: BoardModel } {
  const writer = new ScenarioWriter(computers);
  // Requests about a run carry what the host read of it, a settled run's end from its stream (BoardHost.decideAbout).
  const log = new StreamLog();
  const model = new BoardModel((runId) => log.settled(runId));
  const logged: StepModel<BoardState, BoardInput, BoardDecision> = {
    observe(input, decisions, state) {
      if (decisions !== null) log.record([input, ...decisions]);
      model.observe(input, decisions, state);
    },
  };
  const recorded = recordedHistory(boardDecider, initialBoardState(), logged);
  const apply = (raw: BoardInput) => recorded.apply(withPast(recorded.state, raw, (runId) => log.stream(`run:${runId}`)) as BoardInput);
  for (const input of writer.setup()) apply(input);
  for (const step of steps) apply(writer.next(step, recorded.state));
  const { history, state } = recorded;
  return { history, state, model };
}

describe('board: properties over random histories', () => {
  it('never grants two claims of a run, never opens two turns in a lane, keeps every terminal state final, and its log replays and rebuilds', async () => {
    let claims = 0;
    let runs = 0;
    let twins = 0;
    let drains = 0;
    await fc.assert(
      fc.asyncProperty(computersArb, fc.array(stepArb, { minLength: 1, maxLength: 120, size: 'max' }), async (computers, steps) => {
        const { history, state, model } = runInMemory(computers, steps);
        claims += model.claimsGranted();
        runs += model.size;
        const decided = history.flatMap((r) => r.decisions ?? []);
        twins += decided.filter((d) => d.type === 'board.request.refused' && wordBoardReason(d.data.reason).includes('another incarnation')).length;
        drains += decided.filter((d) => d.type === 'board.computer.draining').length;

        // The same inputs through the real log: each decided and appended in one transaction.
        // An in-memory SQLite log: the file's own paths, WAL and fsync, are the store tests'.
        const store = await openTempStore(':memory:');
        const versions = new Map<string, number>();
        let logged = initialBoardState();
        for (const { input, decisions } of history) {
          const outcome = await decideAndAppend(store, boardDecider, logged, input, versions, (s) => store.streamVersion(s));
          if (!outcome.ok) throw outcome.conflict;
          logged = outcome.state;
          if (decisions === null) expect(outcome.input).toBeNull();
          else expect(outcome.decisions.map((d) => [d.stream, d.type, d.data])).toEqual(json(decisions.map((d) => [d.stream, d.type, d.data])));
        }
        expect(json(logged)).toEqual(json(state));

        const replay = await replayLog(store, deciders);
        expect(replay).toMatchObject({ ok: true, inputs: history.filter((r) => r.decisions !== null).length });

        const folded = await hydrateProjections(store, [boardProjection]);
        expect(json(folded.get('board')!.state)).toEqual(json(state));
        await rebuildProjections(store, projections, { write: true });
        expect((await rebuildProjections(store, projections)).every((r) => r.equal)).toBe(true);
        await store.close();
      }),
      { numRuns: 100 },
    );
    // The histories reach the interesting places, not only refusals.
    expect(runs).toBeGreaterThan(500);
    expect(claims).toBeGreaterThan(100);
    // Twins of one computer and draining computers too.
    expect(twins).toBeGreaterThan(5);
    expect(drains).toBeGreaterThan(5);
  });
});
