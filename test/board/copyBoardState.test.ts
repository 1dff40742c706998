import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boardDecider } from '../../actors/board/boardDecider.ts';
import { type BoardState, initialBoardState } from '../../actors/board/boardState.ts';
import { copyBoardState } from '../../actors/board/copyBoardState.ts';
import type { BoardDecision, BoardInput } from '../../actors/board/decideBoard.ts';
import { recordedHistory } from '../support/deciderSpec.ts';
import { BoardModel } from './boardModel.ts';
import { computersArb, ScenarioWriter, stepArb } from './boardScenario.ts';
import { StreamLog, withPast } from './boardSpec.ts';

describe('a copy of the board state (the committed state a refused board folds the tail onto)', () => {
  it('equals the state, and shares nothing the fold changes in place: folding random histories on the original never moves the copy', () => {
    fc.assert(
      fc.property(computersArb, fc.array(stepArb, { minLength: 1, maxLength: 80, size: 'max' }), (computers, steps) => {
        const writer = new ScenarioWriter(computers);
        // Requests about a run carry what the host read of it, as in board.property.test.ts.
        const log = new StreamLog();
        const model = new BoardModel((runId) => log.settled(runId));
        const recorded = recordedHistory(boardDecider, initialBoardState(), {
          observe(input: BoardInput, decisions: readonly BoardDecision[] | null, state: BoardState) {
            if (decisions !== null) log.record([input, ...decisions]);
            model.observe(input, decisions, state);
          },
        });
        const apply = (raw: BoardInput) => recorded.apply(withPast(recorded.state, raw, (runId) => log.stream(`run:${runId}`)) as BoardInput);
        for (const input of writer.setup()) apply(input);
        for (const step of steps) {
          const before = JSON.stringify(recorded.state);
          const copy = copyBoardState(recorded.state);
          expect(JSON.stringify(copy)).toBe(before);
          apply(writer.next(step, recorded.state));
          expect(JSON.stringify(copy)).toBe(before);
        }
      }),
      { numRuns: 100 },
    );
  });
});
