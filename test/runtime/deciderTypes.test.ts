import { describe, expect, it } from 'vitest';
import { boardDecider } from '../../actors/board/boardDecider.ts';
import { type BoardState, initialBoardState } from '../../actors/board/boardState.ts';
import type { BoardDecision, BoardInput } from '../../actors/board/decideBoard.ts';
import { decider } from '../../actors/decider.ts';
import { queueDecider } from '../../actors/lane/queueDecider.ts';
import type { DomainEvent, NewEventOf, TypesOutside } from '../../events/catalog.ts';
import { exhausted, ignoreRest } from '../../events/exhaustive.ts';
import { decideAndAppend } from '../../runtime/actors/decideAndAppend.ts';
import type { DecidingActor } from '../../runtime/actors/decidingActor.ts';
import { openTempStore } from '../support/tempStore.ts';

/**
 * What the compiler holds a decider and a fold to: `tsc` fails on each `@ts-expect-error` below that
 * stops being an error. The `it`s check what the types cannot: `isInput` answers from `inputs`.
 */
describe('a decider is typed by its own inputs and decisions', () => {
  it('takes only its inputs, answers only its decisions', () => {
    const state = initialBoardState();
    const input: BoardInput = { stream: 'computer:c1', type: 'board.computer.added', data: { computerId: 'c1', tokenHash: 'sha256:c1' }, at: 0 };
    const decisions: BoardDecision[] = boardDecider.decide(state, input);
    expect(decisions.map((d) => d.type)).toEqual(['board.computer.registered']);
    const aDecision = {
      stream: 'computer:c1',
      type: 'board.computer.registered',
      data: { computerId: 'c1', tokenHash: 'x', reason: 'r' },
      at: 0,
    } as const;
    // @ts-expect-error a decision of the board is no input of it
    boardDecider.decide(state, aDecision);
    // @ts-expect-error the queue's decisions are not the board's
    const queued: BoardDecision = { stream: 'c1/lane:L', type: 'run.queued', data: { runId: 'r1', lane: 'L', agentId: null, arrival: 0 }, at: 0 };
    expect(queued).toBeDefined();
  });

  it('switches over its inputs only, and must name each', () => {
    const byType = (input: BoardInput): string => {
      switch (input.type) {
        // @ts-expect-error not an input of the board
        case 'board.run.offered':
          return 'offered';
        case 'board.run.submitted':
          return 'submitted';
        default:
          // @ts-expect-error the other inputs have no case
          return exhausted(input, '');
      }
    };
    expect(byType({ stream: 'run:r1', type: 'board.run.started', data: { runId: 'r1', computerId: 'c1' }, at: 0 })).toBe('');
  });

  it('declares a decision it may take, or does not compile', () => {
    const taker = decider<{ n: number }, NewEventOf<'outbox.taken'>, NewEventOf<'outbox.performed'>>({
      name: 'typed',
      inputs: ['outbox.taken'],
      scopeOf: () => 'one',
      initialState: () => ({ n: 0 }),
      // @ts-expect-error an interruption is not among its decisions
      decide: (state, input) => [{ stream: input.stream, at: input.at, type: 'outbox.interrupted', data: { effect: state.n + 1, detail: 'no' } }],
      evolve: (state) => state,
    });
    expect(taker.isInput({ type: 'outbox.taken' })).toBe(true);
    expect(taker.isInput({ type: 'outbox.performed' })).toBe(false);
  });

  it('stays typed through the runtime: an actor and decideAndAppend take only its inputs', async () => {
    const state = initialBoardState();
    const store = await openTempStore();
    const versionOf = (stream: string) => store.streamVersion(stream);
    const aQueueInput = { stream: 'c1/lane:L', type: 'timer.fired', data: { runId: 'r1' }, at: 0 } as const;
    const aRunDecision = { stream: 'c1/run:r1', type: 'run.cancel.pushed', data: { runId: 'r1', frameId: 'f1' }, at: 0 } as const;
    const board = (actor: DecidingActor<BoardState, BoardInput, BoardDecision>) => {
      // @ts-expect-error a queue's input is no input of the board actor
      void actor.input(aQueueInput);
    };
    expect(board).toBeTypeOf('function');
    // @ts-expect-error another decider's event is no input of the board; from an untyped caller, refused
    await expect(decideAndAppend(store, boardDecider, state, aRunDecision, new Map(), versionOf)).rejects.toThrow(/not an input of the board/);
    expect(await store.headSeq()).toBe(0);
    const outcome = await decideAndAppend(
      store,
      boardDecider,
      state,
      { stream: 'computer:c2', type: 'board.computer.added', data: { computerId: 'c2', tokenHash: 'sha256:c2' }, at: 0 },
      new Map(),
      versionOf,
    );
    if (!outcome.ok) throw outcome.conflict;
    // Committed decisions come back typed as the board's: no cast to read their data.
    const registered = outcome.decisions.find((d) => d.type === 'board.computer.registered');
    expect(registered?.data.computerId).toBe('c2');
    // @ts-expect-error the queue's decisions are not among what the board committed
    expect(outcome.decisions.some((d) => d.type === 'run.queued')).toBe(false);
  });

  it('answers isInput from its inputs', () => {
    for (const type of queueDecider.inputs) expect(queueDecider.isInput({ type })).toBe(true);
    expect(queueDecider.isInput({ type: 'run.queued' })).toBe(false);
  });
});

describe('a fold names what it does not read', () => {
  it('does not compile while a type of a group it reads is left unsaid', () => {
    const fold = (event: DomainEvent): string => {
      switch (event.type) {
        case 'outbox.taken':
          return 'read';
        case 'outbox.performed':
          return 'unread';
        default:
          // @ts-expect-error outbox.interrupted is in a group it reads, and not named
          ignoreRest<TypesOutside<'outbox'>>(event);
          return 'unread';
      }
    };
    expect(
      fold({ seq: 1, stream: 'outbox:a', version: 1, type: 'outbox.taken', data: { through: 1, effects: [] }, at: 0, cause: null, actor: 'h:1' }),
    ).toBe('read');
  });
});
