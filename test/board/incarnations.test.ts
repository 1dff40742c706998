import { describe, expect, it } from 'vitest';
import { requestAnswer } from '../../actors/board/boardAnswers.ts';
import { holder } from '../../actors/board/boardQueries.ts';
import { boardSpec, computersOnline, input, said, summary } from './boardSpec.ts';

const { submit, claim } = input;

/** Two daemons joined as one computer (a copied config): each life of a daemon has its own incarnation (docs/rules.md#wire-and-cli). */
describe('board: incarnations of one computer', () => {
  it('a run held by one incarnation of a computer is claimed_elsewhere for another incarnation of it', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'));
    expect(summary(spec.when(claim('r1', 'c1', 1, 'life-a')))).toEqual(['claimed r1 by c1']);
    const twin = spec.when(claim('r1', 'c1', 2, 'life-b'));
    expect(summary(twin)).toEqual(['refused claim 409 claimed_elsewhere']);
    expect(requestAnswer(twin!)).toMatchObject({ status: 409, code: 'claimed_elsewhere' });
    expect(said(twin![0]!)).toMatchObject({ reason: 'run r1 is claimed by another incarnation of computer c1 (life-a, not life-b)' });
    expect(holder(spec.state, 'r1')).toBe('c1');
  });

  it('the incarnation that holds a run is granted its claim again, as a repeat', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), claim('r1', 'c1', 1, 'life-a'));
    expect(summary(spec.when(claim('r1', 'c1', 2, 'life-a')))).toEqual(['repeated claim 200']);
  });

  it('a claim without an incarnation is a life of its own: never granted a run another incarnation holds, nor the other way round', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), submit('r2', 'B'), claim('r1', 'c1', 1), claim('r2', 'c1', 1, 'life-a'));
    const headerless = spec.when(claim('r2', 'c1', 2));
    expect(summary(headerless)).toEqual(['refused claim 409 claimed_elsewhere']);
    expect(said(headerless![0]!)).toMatchObject({
      reason: 'run r2 is claimed by another incarnation of computer c1 (life-a, not a claim without one)',
    });
    expect(summary(spec.when(claim('r1', 'c1', 2, 'life-b')))).toEqual(['refused claim 409 claimed_elsewhere']);
    // The same (nameless) life asking again: its answer was lost.
    expect(summary(spec.when(claim('r1', 'c1', 3)))).toEqual(['repeated claim 200']);
  });

  it('claims recorded before that rule (no `bound`) are re-derived as they were taken: granted again', () => {
    const unbound = (runId: string, at: number, incarnation?: string) => {
      const { bound: _, ...data } = claim(runId, 'c1', at, incarnation).data;
      return { ...claim(runId, 'c1', at, incarnation), data };
    };
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), submit('r2', 'B'), unbound('r1', 1), unbound('r2', 1, 'life-a'));
    expect(spec.state.runs.r1!.bound).toBeUndefined();
    expect(summary(spec.when(unbound('r1', 2, 'life-b')))).toEqual(['repeated claim 200']);
    expect(summary(spec.when(unbound('r2', 2)))).toEqual(['repeated claim 200']);
  });

  it('the claim grant records the incarnation it was granted to', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'));
    const [granted] = spec.when(claim('r1', 'c1', 1, 'life-a'))!;
    expect(granted!.data).toMatchObject({ runId: 'r1', computerId: 'c1', incarnation: 'life-a', bound: true });
    expect(spec.state.runs.r1!.incarnation).toBe('life-a');
    expect(spec.state.runs.r1!.bound).toBe(true);
  });
});
