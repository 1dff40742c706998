import { describe, expect, it } from 'vitest';
import { requestAnswer } from '../../actors/board/boardAnswers.ts';
import { idleNextTurns } from '../../actors/board/boardQueries.ts';
import type { BoardInput } from '../../actors/board/decideBoard.ts';
import { WINDOW } from '../../actors/board/offerPolicy.ts';
import { boardSpec, computersOnline, input, pushed, said, summary } from './boardSpec.ts';

const { submit, claim, complete, connected, disconnected, added, draining, stale } = input;
const declined = (runId: string, computerId: string, reason: 'refused' | 'unanswered', at = 0) =>
  ({ ...input.draining(runId, computerId, at), data: { runId, computerId, reason, oneOffer: true } }) as BoardInput;
const names = (n: number) => Array.from({ length: n }, (_, i) => `c${String(i).padStart(3, '0')}`);

/** The computers a decision list offers `runId` to. */
function offeredTo(decisions: ReturnType<ReturnType<typeof boardSpec>['when']>, runId: string): string[] {
  return (decisions ?? []).flatMap((d) => (d.type === 'board.run.offered' && d.data.runId === runId ? d.data.computers : []));
}

describe('board: one offer at a time', () => {
  it('given many computers, when runs of new lanes come, then each is offered to one computer, the free ones in turn', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2', 'c3'));
    const first = spec.when(submit('r1', 'A', 1));
    expect(summary(first)).toEqual(['queued r1 #0', 'offered r1 → c1']);
    expect(said(first![1]!)).toMatchObject({
      reason: 'submitted: offered to c1, the computer with the most room (0 lanes waiting or runs held there)',
    });
    expect(offeredTo(spec.when(submit('r2', 'B', 2)), 'r2')).toEqual(['c2']);
    expect(offeredTo(spec.when(submit('r3', 'C', 3)), 'r3')).toEqual(['c3']);
    spec.when(claim('r1', 'c1', 4));
    spec.when(complete('r1', 'c1', true, undefined, 5));
    spec.when(claim('r2', 'c2', 6));
    // c2 holds a claim and c3 has a run waiting: c1 has the most room.
    expect(offeredTo(spec.when(submit('r4', 'D', 7)), 'r4')).toEqual(['c1']);
  });

  it('given a lane whose last turn ran on c2, then its next turn is offered to c2 first, and to the next computer when c2 refuses it or leaves', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2', 'c3'), submit('a0', 'A'));
    // c2 claims a run it was not offered: granted (a claim is answered whoever it comes from).
    expect(summary(spec.when(claim('a0', 'c2', 1)))).toEqual(['claimed a0 by c2']);
    spec.when(complete('a0', 'c2', true, undefined, 2));
    const next = spec.when(submit('a1', 'A', 3));
    expect(summary(next)).toEqual(['queued a1 #1', 'offered a1 → c2']);
    expect(said(next![1]!)).toMatchObject({ reason: 'submitted: offered to c2, which ran the last turn of lane A' });
    // Its later turn follows it there.
    expect(offeredTo(spec.when(submit('a2', 'A', 4)), 'a2')).toEqual(['c2']);
    // c2 refuses: the lane's runs go to one other computer together, oldest first.
    const moved = spec.when(declined('a1', 'c2', 'refused', 5));
    // (c1 and c3 are as free; c1 was offered a0 before, so c3, offered fewer runs, is next.)
    expect(summary(moved)).toEqual(['offered a1 → c3', 'offered a2 → c3']);
    expect(said(moved![0]!)).toMatchObject({
      reason: 're-offered: c2 refused it; to c3, the computer with the most room (0 lanes waiting or runs held there)',
    });
    // A pass from a computer the lane already left decides nothing, and is not recorded.
    expect(summary(spec.when(declined('a1', 'c2', 'unanswered', 6)))).toEqual(['(ignored)']);
  });

  it('given an offer left unanswered, refused, or declined as draining, then the run is offered to the next computer that has not had it, and to nobody once all had it', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2', 'c3'));
    expect(offeredTo(spec.when(submit('r1', 'A', 1)), 'r1')).toEqual(['c1']);
    const silent = spec.when(declined('r1', 'c1', 'unanswered', 5_001));
    expect(summary(silent)).toEqual(['offered r1 → c2']);
    expect(said(silent![0]!)).toMatchObject({ reason: expect.stringMatching(/^re-offered: c1 did not answer its offer; to c2/) });
    expect(summary(spec.when(draining('r1', 'c2', 5_002)))).toEqual(['draining c2', 'offered r1 → c3']);
    // c3 refuses too: nobody left who has not had it; nothing is decided, nothing recorded (the offer monitor tries again later).
    expect(summary(spec.when(declined('r1', 'c3', 'refused', 5_003)))).toEqual(['(ignored)']);
    // A minute on, it is stale: offered again, to whom the policy says among those who had it (c2 drains).
    expect(offeredTo(spec.when(stale('r1', 1, 65_003)), 'r1')).toEqual(['c1']);
  });

  it('given a run that lost, then every other claim of it is answered and costs no row, however many computers there are', () => {
    const rowsFor = (n: number) => {
      const computers = names(n);
      const spec = boardSpec(...computersOnline(...computers));
      let rows = 0;
      const recorded = (event: BoardInput) => {
        const decisions = spec.when(event);
        rows += decisions === null ? 0 : 1 + decisions.length;
        return decisions;
      };
      for (let i = 0; i < 10; i++) {
        const runId = `r${i}`;
        const [to] = offeredTo(recorded(submit(runId, `lane-${i}`, i * 10)), runId);
        expect(to).toBeDefined();
        recorded(claim(runId, to!, i * 10 + 1));
        // Every other computer claims it too (a stale frame, a straggler): each is answered 409, none recorded.
        for (const other of computers.filter((c) => c !== to)) {
          expect(recorded(claim(runId, other, i * 10 + 2))).toBeNull();
          expect(requestAnswer(spec.unrecorded(claim(runId, other, i * 10 + 2)))).toMatchObject({ status: 409, code: 'claimed_elsewhere' });
        }
        recorded(complete(runId, to!, true, undefined, i * 10 + 3));
        for (const other of computers.slice(0, 3)) expect(recorded(claim(runId, other, i * 10 + 4))).toBeNull();
      }
      return rows / 10;
    };
    const few = rowsFor(2);
    expect(rowsFor(20)).toBe(few);
    expect(rowsFor(200)).toBe(few);
    // submitted, queued, offered; claim asked, claimed; completion, finished.
    expect(few).toBe(7);
  });

  it('given a turn busy on one computer, then the first busy claim of a later turn is recorded (why it waits), the ones after are not', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('a0', 'A'), claim('a0', 'c1', 1), submit('a1', 'A', 2));
    expect(summary(spec.when(claim('a1', 'c2', 3)))).toEqual(['refused claim 409 conversation_busy']);
    expect(summary(spec.when(claim('a1', 'c2', 30_003)))).toEqual(['(ignored)']);
    expect(requestAnswer(spec.unrecorded(claim('a1', 'c2', 30_003)))).toMatchObject({ status: 409, code: 'conversation_busy' });
    // The turn ends: the waiter is resent to the lane's last computer, which ran it.
    expect(summary(spec.when(complete('a0', 'c1', true, undefined, 40_000)))).toEqual(['finished a0 succeeded', 'offered a1 → c1']);
  });

  it(`given every computer has ${WINDOW} runs waiting, then new lanes wait unoffered, saying why; a claim makes room and takes the oldest; a computer that connects takes its window`, () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'));
    for (let i = 0; i < 2 * WINDOW; i++) spec.when(submit(`r${i}`, `L${i}`, i));
    expect(spec.state.pushed).toEqual({ c1: WINDOW, c2: WINDOW });
    const waits = spec.when(submit('x', 'X', 100));
    expect(summary(waits)).toEqual([`queued x #${2 * WINDOW}`]);
    expect(said(waits![0]!)).toMatchObject({ waits: `offered to nobody yet: every connected computer has ${WINDOW} or more lanes waiting` });
    spec.when(submit('y', 'Y', 101));
    // c2 claims one of its runs: its window has room, and the oldest waiting lane goes to it.
    expect(summary(spec.when(claim('r1', 'c2', 102)))).toEqual(['claimed r1 by c2', 'offered x → c2']);
    // c3 connects: it is pushed what waits, up to its window, in one event.
    spec.when(added('c3', 103));
    const online = spec.when(connected('c3', 104));
    expect(summary(online)).toEqual(['online c3']);
    expect(said(online![0]!)).toMatchObject({ reason: 'connected to the push stream: pushed 1 unclaimed run', oneOffer: true });
    expect(pushed(online, spec.state)).toEqual(['run.requested y → c3']);
  });

  it('given a computer that leaves with runs offered to it, then its lanes go to the next computer; when it reconnects, it is pushed only what is offered to it', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('a0', 'A'), submit('b0', 'B', 1), submit('a1', 'A', 2));
    expect(spec.state.lanes.A!.offer).toBe('c1');
    const left = spec.when(disconnected('c1', 3));
    expect(summary(left)).toEqual(['offline c1', 'offered a0 → c2', 'offered a1 → c2']);
    const back = spec.when(connected('c1', 4));
    expect(pushed(back, spec.state)).toEqual([]);
    spec.when(submit('c0', 'C', 5));
    expect(spec.state.lanes.C!.offer).toBe('c1');
    spec.when(disconnected('c1', 6));
    spec.when(disconnected('c2', 7));
    // Nobody is left: the runs wait. c1 is back: it is pushed every lane that waits, its own first among them.
    const again = spec.when(connected('c1', 8));
    expect(pushed(again, spec.state)).toEqual(['run.requested a0 → c1', 'run.requested b0 → c1', 'run.requested a1 → c1', 'run.requested c0 → c1']);
  });

  it(`given every window full, then the offer monitor watches the lanes offered to a computer (one that never claims must lose them), not the lanes waiting for room (the next claim or connect takes those)`, () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'));
    for (let i = 0; i < 2 * WINDOW; i++) spec.when(submit(`r${i}`, `L${i}`, i));
    spec.when(submit('x', 'X', 100));
    spec.when(submit('y', 'Y', 101));
    const offered = Array.from({ length: 2 * WINDOW }, (_, i) => `r${i}`);
    expect(idleNextTurns(spec.state).sort()).toEqual([...offered].sort());
    // c2 claims: the oldest waiting lane takes the place; y still waits for room, unwatched.
    spec.when(claim('r1', 'c2', 102));
    expect(idleNextTurns(spec.state)).toContain('x');
    expect(idleNextTurns(spec.state)).not.toContain('y');
  });
});
