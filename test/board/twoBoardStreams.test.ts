/**
 * Two boards on one log (docs/rules.md#postgresql-board): a computer's push stream moves from one to the other (a cut, a split,
 * a board that dies), and the board it left records the close only later. That late close must not end
 * the connection the other board now holds: found by the simulator's two-board world (a run reaped
 * though its computer heartbeated it, once the board it left saw it as connected to nobody).
 */
import { describe, expect, it } from 'vitest';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { isConnected } from '../../actors/board/boardState.ts';
import { boardSpec, input, summary, T0 } from './boardSpec.ts';

const connectedVia = (computerId: string, board: string, at: number) => boardInput.connected(computerId, T0 + at, board);
const closedOn = (computerId: string, board: string, at: number) => boardInput.disconnected(computerId, T0 + at, undefined, board);

describe('board: a computer whose stream moved to another board of the log', () => {
  it('given c1 connected through board b1 then through b2, when b1 records its stream closed, then that is ignored: c1 stays connected (through b2)', () => {
    const spec = boardSpec(input.added('c1'), connectedVia('c1', 'b1', 1), connectedVia('c1', 'b2', 2));

    expect(summary(spec.when(closedOn('c1', 'b1', 3)))).toEqual(['(ignored)']);
    expect(isConnected(spec.state, 'c1')).toBe(true);
  });

  it('given c1 connected through b2, when b2 records its stream closed, then c1 goes offline', () => {
    const spec = boardSpec(input.added('c1'), connectedVia('c1', 'b1', 1), connectedVia('c1', 'b2', 2));

    expect(summary(spec.when(closedOn('c1', 'b2', 3)))).toEqual(['offline c1']);
    expect(isConnected(spec.state, 'c1')).toBe(false);
  });

  it('given a connection recorded without its board (an older version, one board), when any close comes, then it goes offline as before', () => {
    const spec = boardSpec(input.added('c1'), input.connected('c1', 1));

    expect(summary(spec.when(closedOn('c1', 'b1', 2)))).toEqual(['offline c1']);
  });
});
