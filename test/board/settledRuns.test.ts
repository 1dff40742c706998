import { describe, expect, it } from 'vitest';
import { boardDecider } from '../../actors/board/boardDecider.ts';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { type BoardState, initialBoardState } from '../../actors/board/boardState.ts';
import { decideStep } from '../../actors/decideStep.ts';

const T0 = Date.UTC(2026, 0, 1);
const LANES = 4;

/** `runs` runs over four lanes, each submitted, claimed by c1, and ended (succeeded, failed, cancelled, reaped in turn). */
function boardAfter(runs: number): BoardState {
  let state = initialBoardState();
  let at = T0;
  const step = (input: Parameters<typeof boardDecider.decide>[1]) => {
    state = decideStep(boardDecider, state, input)?.state ?? state;
  };
  step(boardInput.computerAdded('c1', 'sha256:c1', at));
  step(boardInput.connected('c1', at));
  for (let i = 0; i < runs; i++) {
    const runId = `r${i}`;
    at += 1_000;
    step(boardInput.submitted({ runId, lane: `lane-${i % LANES}`, prompt: `prompt ${i}`, agentId: null, timeoutS: null }, at));
    if (i % 4 === 2) {
      step(boardInput.cancel(runId, at));
      continue;
    }
    step(boardInput.claim(runId, 'c1', at, 'life-1'));
    step(boardInput.reply(runId, 'c1', `a reply to ${i}`, at));
    if (i % 4 === 3) step(boardInput.lapsed(runId, at, at + 120_000));
    else step(boardInput.completion(runId, 'c1', i % 4 === 0, i % 4 === 0 ? undefined : 'boom', at, { costUsd: 0.01 }));
  }
  return state;
}

/** The state as its checkpoint holds it, its counters read as digits of any length. */
function shape(state: BoardState): string {
  return JSON.stringify(state).replace(/\d+/g, '#');
}

describe('board: settled runs leave its state (issue 16)', () => {
  it('the board state (and so its checkpoint) after 400 settled runs is the one after 12: bounded by what is live', () => {
    const few = boardAfter(12);
    const many = boardAfter(400);
    expect(Object.keys(many.runs)).toEqual([]);
    expect(shape(many)).toBe(shape(few));
    // Its checkpoint is this state as JSON: its size does not grow with the runs handled (counters aside).
    expect(JSON.stringify(many).length).toBeLessThan(JSON.stringify(few).length + 16);
  });
});
