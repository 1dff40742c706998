/**
 * Two boards on one log (docs/rules.md#postgresql-board): a computer's push stream moves from one to the other (a cut, a split,
 * a board that dies), and the board it left records the close only later. That late close must not end
 * the connection the other board now holds: found by the simulator's two-board world (a run reaped
 * though its computer heartbeated it, once the board it left saw it as connected to nobody).
 */
import { describe, expect, it } from 'vitest';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { isConnected } from '../../actors/board/boardState.ts';
import { boardSpec, input, said, summary, T0 } from './boardSpec.ts';

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

const lifeVia = (computerId: string, board: string, at: number, incarnation: string | null, over?: string) =>
  boardInput.connected(computerId, T0 + at, board, { incarnation, ...(over === undefined ? {} : { over }) });

/**
 * One push stream per computer across the boards of a log, decided at the append: two boards that each let
 * in one of two daemons with the same id (both looked while the log had it offline) have the later refused.
 */
describe('board: one push stream per computer across the boards of a log', () => {
  it('given c1 connected through b1 by life-a, when b2 records life-b connecting, then it is refused 409 computer_connected_elsewhere and b1 keeps it', () => {
    const spec = boardSpec(input.added('c1'), lifeVia('c1', 'b1', 1, 'life-a'));

    const twin = spec.when(lifeVia('c1', 'b2', 2, 'life-b'));
    expect(summary(twin)).toEqual(['refused connect 409 computer_connected_elsewhere']);
    expect(said(twin![0]!)).toMatchObject({ reason: 'computer c1 is connected to board b1 (incarnation life-a)' });
    expect(spec.state.computers.c1).toMatchObject({ via: 'b1', incarnation: 'life-a' });
    // A daemon that names no incarnation is a life of its own too.
    expect(summary(spec.when(lifeVia('c1', 'b2', 3, null)))).toEqual(['refused connect 409 computer_connected_elsewhere']);
  });

  it('given c1 connected through b1, when the same life connects through b2 (it moved), then b2 holds it', () => {
    const spec = boardSpec(input.added('c1'), lifeVia('c1', 'b1', 1, 'life-a'));

    expect(summary(spec.when(lifeVia('c1', 'b2', 2, 'life-a')))).toEqual(['online c1']);
    expect(spec.state.computers.c1).toMatchObject({ via: 'b2', incarnation: 'life-a' });
  });

  it('given c1 connected through b1, when b2 found b1 holding no live stream (it died) and records life-b over it, then b2 holds it', () => {
    const spec = boardSpec(input.added('c1'), lifeVia('c1', 'b1', 1, 'life-a'));

    expect(summary(spec.when(lifeVia('c1', 'b2', 2, 'life-b', 'b1')))).toEqual(['online c1']);
    expect(spec.state.computers.c1).toMatchObject({ via: 'b2', incarnation: 'life-b' });
    // A lapse named of another board than the one the log has does not take it.
    expect(summary(spec.when(lifeVia('c1', 'b3', 3, 'life-c', 'b1')))).toEqual(['refused connect 409 computer_connected_elsewhere']);
  });

  it('given connections recorded by older versions (no incarnation), then a second board’s connection is taken, as it was', () => {
    const spec = boardSpec(input.added('c1'), connectedVia('c1', 'b1', 1));

    expect(summary(spec.when(connectedVia('c1', 'b2', 2)))).toEqual(['online c1']);
  });
});
