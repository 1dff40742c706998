import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boardDecider } from '../../actors/board/boardDecider.ts';
import { initialBoardState } from '../../actors/board/boardState.ts';
import { copyBoardState } from '../../actors/board/copyBoardState.ts';
import { recordedHistory } from '../support/deciderSpec.ts';
import { BoardModel } from './boardModel.ts';
import { computersArb, ScenarioWriter, stepArb } from './boardScenario.ts';

describe('a copy of the board state (the committed state a refused board folds the tail onto)', () => {
  it('equals the state, and shares nothing the fold changes in place: folding random histories on the original never moves the copy', () => {
    fc.assert(
      fc.property(computersArb, fc.array(stepArb, { minLength: 1, maxLength: 80, size: 'max' }), (computers, steps) => {
        const writer = new ScenarioWriter(computers);
        const recorded = recordedHistory(boardDecider, initialBoardState(), new BoardModel());
        for (const input of writer.setup()) recorded.apply(input);
        for (const step of steps) {
          const before = JSON.stringify(recorded.state);
          const copy = copyBoardState(recorded.state);
          expect(JSON.stringify(copy)).toBe(before);
          recorded.apply(writer.next(step, recorded.state));
          expect(JSON.stringify(copy)).toBe(before);
        }
      }),
      { numRuns: 100 },
    );
  });
});
