import { describe, expect, it } from 'vitest';
import { framesOf, requestAnswer } from '../../actors/board/boardAnswers.ts';
import { boardDecider } from '../../actors/board/boardDecider.ts';
import { runView } from '../../actors/board/boardQueries.ts';
import { BACKLOG } from '../../actors/board/offers.ts';
import { boardSpec, olderComputersOnline as computersOnline, olderInput as input, pushed, said, summary } from './boardSpec.ts';

// The rule before one offer at a time, as logs recorded by older versions are re-derived (oneOffer.test.ts has today's).
const { submit, claim, complete, connected, disconnected, added } = input;

describe('board: offers', () => {
  it('given two connected computers, when a run is submitted, then it is queued and offered to both', () => {
    const spec = boardSpec(...computersOnline('c2', 'c1'));
    const decisions = spec.when(submit('r1', 'A', 0, { agentId: 'x', timeoutS: 60 }));
    expect(summary(decisions)).toEqual(['queued r1 #0', 'offered r1 → c1,c2']);
    expect(requestAnswer(decisions!)).toEqual({ status: 201, runId: 'r1' });
    expect(said(decisions![1]!)).toMatchObject({ agentId: 'x', reason: 'submitted: offered to every connected computer (2)' });
    expect(runView(spec.state, 'r1')).toEqual({ run_id: 'r1', lane: 'A', state: 'queued' });
  });

  it('given no computer connected, then a run is queued and offered to nobody; a computer that connects is offered every unclaimed run, oldest first', () => {
    const spec = boardSpec(added('c1'), added('c2'), submit('r1', 'A'), submit('r2', 'B', 1), submit('r3', 'A', 2), submit('r4', 'C', 3));
    expect(summary(spec.when(submit('r5', 'A', 4)))).toEqual(['queued r5 #4']);
    spec.when(connected('c1', 5));
    spec.when(claim('r2', 'c1', 6));
    spec.when(input.cancel('r4', 7));
    spec.when(disconnected('c1', 8));
    // c1 ran lane B's turn: B is not A. c2 connects and is offered every unclaimed run.
    const online = spec.when(connected('c2', 9));
    expect(summary(online)).toEqual(['online c2']);
    expect(pushed(online, spec.state)).toEqual(['run.requested r1 → c2', 'run.requested r3 → c2', 'run.requested r5 → c2']);
  });

  it('given a computer that reconnects, then its unclaimed runs are pushed to it again', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), submit('r2', 'B'), claim('r1', 'c1'), disconnected('c1', 1));
    const online = spec.when(connected('c1', 2));
    expect(summary(online)).toEqual(['online c1']);
    expect(pushed(online, spec.state)).toEqual(['run.requested r2 → c1']);
  });

  it("given the computer that ran a lane's last turn is connected, then the lane's runs go to it only; once it leaves, to everyone", () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('r1', 'A'), claim('r1', 'c2', 1), complete('r1', 'c2', true, undefined, 2));
    const next = spec.when(submit('r2', 'A', 3));
    expect(summary(next)).toEqual(['queued r2 #1', 'offered r2 → c2']);
    expect(said(next![1]!)).toMatchObject({ reason: 'submitted: offered to c2, which ran the last turn of lane A' });
    // Another lane still goes to everyone.
    expect(summary(spec.when(submit('b1', 'B', 4)))).toEqual(['queued b1 #2', 'offered b1 → c1,c2']);
    // A third computer connecting is not offered lane A: it stays with c2.
    spec.when(added('c3'));
    const c3 = spec.when(connected('c3', 5));
    expect(pushed(c3, spec.state)).toEqual(['run.requested b1 → c3']);
    // c2 leaves: lane A's runs go to those that have not had them.
    const left = spec.when(disconnected('c2', 6));
    expect(summary(left)).toEqual(['offline c2', 'offered r2 → c1,c3']);
    expect(said(left![1]!)).toMatchObject({ reason: 're-offered: computer c2, which ran the last turn of lane A, disconnected' });
    expect(summary(spec.when(submit('r3', 'A', 7)))).toEqual(['queued r3 #3', 'offered r3 → c1,c3']);
    // c2 is back: lane A is its again.
    const back = spec.when(connected('c2', 8));
    expect(pushed(back, spec.state)).toEqual(['run.requested r2 → c2', 'run.requested b1 → c2', 'run.requested r3 → c2']);
    expect(summary(spec.when(submit('r4', 'A', 9)))).toEqual(['queued r4 #4', 'offered r4 → c2']);
  });

  it(`given every connected computer has ${BACKLOG} runs waiting, then a new lane's run goes to the one with the fewest, and claims give the room back`, () => {
    const backlog = Array.from({ length: BACKLOG }, (_, i) => submit(`w${i}`, `L${i}`, i));
    const spec = boardSpec(...computersOnline('c1', 'c2'), ...backlog);
    expect(spec.state.pushed).toEqual({ c1: BACKLOG, c2: BACKLOG });
    // Racing for it would only make both queue it and one claim be wasted.
    const first = spec.when(submit('x', 'X', 10));
    expect(summary(first)).toEqual([`queued x #${BACKLOG}`, 'offered x → c1']);
    expect(said(first![1]!)).toMatchObject({
      reason: `submitted: offered to c1, which has the fewest runs waiting (${BACKLOG}): every connected computer has ${BACKLOG} or more`,
    });
    expect(summary(spec.when(submit('y', 'Y', 11)))).toEqual([`queued y #${BACKLOG + 1}`, 'offered y → c2']);
    // Two claims take two runs off both computers' waiting: room again, and a new lane goes to both.
    spec.when(claim('w0', 'c1', 12));
    spec.when(claim('w1', 'c2', 13));
    expect(spec.state.pushed).toEqual({ c1: BACKLOG - 1, c2: BACKLOG - 1 });
    expect(summary(spec.when(submit('z', 'Z', 14)))).toEqual([`queued z #${BACKLOG + 2}`, 'offered z → c1,c2']);
  });

  it('given one computer with room and one without, then a new lane goes to the one with room, and its later runs follow it there', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('a0', 'A'), claim('a0', 'c1', 1), complete('a0', 'c1', true, undefined, 2));
    // Lane A's turns all wait on c1, which ran its last turn: c1 has no room, c2 has all of it.
    for (let i = 1; i <= BACKLOG; i++) spec.when(submit(`a${i}`, 'A', 2 + i));
    expect(spec.state.pushed).toEqual({ c1: BACKLOG });
    const b1 = spec.when(submit('b1', 'B', 20));
    expect(summary(b1)).toEqual([`queued b1 #${BACKLOG + 1}`, 'offered b1 → c2']);
    expect(said(b1![1]!)).toMatchObject({ reason: `submitted: offered to the connected computers with fewer than ${BACKLOG} runs waiting (c2)` });
    // A cancel gives c1 room; lane B's next turn still goes where its first one waits, not to both.
    spec.when(input.cancel('a1', 21));
    expect(spec.state.pushed).toEqual({ c1: BACKLOG - 1, c2: 1 });
    const b2 = spec.when(submit('b2', 'B', 22));
    expect(summary(b2)).toEqual([`queued b2 #${BACKLOG + 2}`, 'offered b2 → c2']);
    expect(said(b2![1]!)).toMatchObject({ reason: "submitted: offered to c2, where the lane's earlier run b1 waits" });
  });

  it('given a disconnect of a computer that is not connected, then it is ignored and not recorded', () => {
    const spec = boardSpec(added('c1'));
    expect(summary(spec.when(disconnected('c1')))).toEqual(['(ignored)']);
  });

  it('given an offer and a cancel committed at seq 7 and 9, then the server pushes one frame per computer, ids unique', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'));
    const [, offered] = spec.when(submit('r1', 'A'))!;
    expect(framesOf({ ...offered!, seq: 7 }, spec.state)).toEqual([
      { computerId: 'c1', frame: { id: '7-c1', kind: 'run.requested', data: { run_id: 'r1', lane: 'A', computer_id: 'c1' } } },
      { computerId: 'c2', frame: { id: '7-c2', kind: 'run.requested', data: { run_id: 'r1', lane: 'A', computer_id: 'c2' } } },
    ]);
    const [cancelled] = spec.when(input.cancel('r1'))!;
    expect(framesOf({ ...cancelled!, seq: 9 }, spec.state)).toEqual([
      { computerId: 'c1', frame: { id: '9-c1', kind: 'run.cancelled', data: { run_id: 'r1' } } },
      { computerId: 'c2', frame: { id: '9-c2', kind: 'run.cancelled', data: { run_id: 'r1' } } },
    ]);
  });
});

describe('board: withdrawing a claimed run', () => {
  it('given a run offered to three computers, when one claims it, then it is withdrawn from the other two at once (a frame each, not recorded)', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2', 'c3'));
    spec.when(submit('r1', 'A'));
    const claimed = spec.when(claim('r1', 'c2', 1));
    expect(summary(claimed)).toEqual(['claimed r1 by c2']);
    expect(framesOf({ ...claimed![0]!, seq: 11 }, spec.state)).toEqual([
      { computerId: 'c1', frame: { id: '11-c1', kind: 'run.withdrawn', data: { run_id: 'r1' } } },
      { computerId: 'c3', frame: { id: '11-c3', kind: 'run.withdrawn', data: { run_id: 'r1' } } },
    ]);
  });
});

describe('board: submissions', () => {
  it('given a submission with an idempotency key, when the same key comes again, then no new run: the answer names the first', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A', 0, { idempotencyKey: 'key-1', prompt: 'p' }));
    const again = spec.when(submit('r9', 'A', 1, { idempotencyKey: 'key-1', prompt: 'p' }));
    expect(summary(again)).toEqual(['deduplicated r9 → r1']);
    expect(again![0]!.stream).toBe('run:r1');
    expect(requestAnswer(again!)).toEqual({ status: 201, runId: 'r1' });
    expect(runView(spec.state, 'r9')).toBeNull();
    expect(summary(spec.when(submit('r2', 'A', 2, { idempotencyKey: 'key-2' })))).toEqual(['queued r2 #1', 'offered r2 → c1']);
    expect(summary(spec.when(submit('r3', 'A', 3)))).toEqual(['queued r3 #2', 'offered r3 → c1']);
  });

  it('an idempotency key reused with a different body is refused 422 idempotency_key_reused, naming what differs', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A', 0, { idempotencyKey: 'key-1', timeoutS: 60, prompt: 'p' }));
    const otherLane = spec.when(submit('r8', 'B', 1, { idempotencyKey: 'key-1', timeoutS: 60, prompt: 'p' }));
    expect(summary(otherLane)).toEqual(['refused submit 422 idempotency_key_reused']);
    expect(requestAnswer(otherLane!)).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    expect(said(otherLane![0]!)).toMatchObject({ reason: 'idempotency key "key-1" was used for run r1 with another body (lane differs)' });
    expect(summary(spec.when(submit('r9', 'A', 2, { idempotencyKey: 'key-1', prompt: 'p' })))).toEqual(['refused submit 422 idempotency_key_reused']);
    expect(summary(spec.when(submit('r9', 'A', 2, { idempotencyKey: 'key-1', timeoutS: 60, agentId: 'x', prompt: 'p' })))).toEqual([
      'refused submit 422 idempotency_key_reused',
    ]);
    // The same body again: the first run.
    expect(summary(spec.when(submit('r7', 'A', 3, { idempotencyKey: 'key-1', timeoutS: 60, prompt: 'p' })))).toEqual(['deduplicated r7 → r1']);
    expect(runView(spec.state, 'r8')).toBeNull();
  });

  it('given a keyed run that finished, then its body stays under its key to be compared with, while both runs left the state', () => {
    const { submit: sub, claim, complete } = input;
    const spec = boardSpec(...computersOnline('c1'), sub('r1', 'A', 0, { idempotencyKey: 'key-1', prompt: 'p' }), sub('r2', 'B', 0, { prompt: 'q' }));
    for (const runId of ['r1', 'r2']) {
      spec.when(claim(runId, 'c1', 1));
      spec.when(complete(runId, 'c1', true, undefined, 2));
    }
    expect(spec.state.runs).toEqual({});
    expect(spec.state.idempotency['key-1']).toEqual({ runId: 'r1', lane: 'A', prompt: 'p', agentId: null, timeoutS: null });
    expect(summary(spec.when(sub('r8', 'A', 3, { idempotencyKey: 'key-1', prompt: 'another' })))).toEqual([
      'refused submit 422 idempotency_key_reused',
    ]);
    expect(summary(spec.when(sub('r9', 'A', 3, { idempotencyKey: 'key-1', prompt: 'p' })))).toEqual(['deduplicated r9 → r1']);
  });

  it('a reuse recorded by an older version (its input without bodyChecked) is decided as it was taken: deduplicated, whatever its body', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A', 0, { idempotencyKey: 'key-1', prompt: 'p' }));
    const checked = submit('r8', 'B', 1, { idempotencyKey: 'key-1', prompt: 'another' });
    const { bodyChecked, ...older } = checked.data;
    expect(bodyChecked).toBe(true);
    expect(summary(spec.when({ ...checked, data: older }))).toEqual(['deduplicated r8 → r1']);
  });

  it('given a run id already taken, then the submission is refused, never overwritten', () => {
    const spec = boardSpec(submit('r1', 'A'));
    expect(summary(spec.when(submit('r1', 'B')))).toEqual(['refused submit 409 run_exists']);
    expect(runView(spec.state, 'r1')).toMatchObject({ lane: 'A' });
  });

  it('given a computer, when it is added again or an unknown one connects, then it is refused', () => {
    const spec = boardSpec(added('c1'));
    expect(summary(spec.when(added('c1')))).toEqual(['refused computer.add 409 computer_exists']);
    expect(summary(spec.when(connected('c9')))).toEqual(['refused connect 404 unknown_computer']);
  });
});

describe('board: scope', () => {
  it("folds the board's own streams into one scope, and leaves a computer's streams and other events alone", () => {
    expect(boardDecider.scopeOf({ stream: 'run:r1', type: 'board.run.queued' })).toBe('board');
    expect(boardDecider.scopeOf({ stream: 'computer:c1', type: 'board.computer.online' })).toBe('board');
    expect(boardDecider.scopeOf({ stream: 'c1/run:r1', type: 'run.queued' })).toBeNull();
    expect(boardDecider.scopeOf({ stream: 'outbox:announce', type: 'outbox.taken' })).toBeNull();
  });

  it('given a session adopted for a lane on c2, when the lane gets a run, then it is offered to c2 first', () => {
    const adopted = {
      stream: 'lane:A',
      type: 'adoption.adopted',
      data: { lane: 'A', request: 1, sessionId: 'sess-1', computerId: 'c2', reason: 'adopted by test' },
      at: Date.UTC(2026, 0, 1),
    } as const;
    const spec = boardSpec(...computersOnline('c1', 'c2'), adopted);
    expect(summary(spec.when(input.submit('r1', 'A', 1)))).toContain('offered r1 → c2');
  });
});

describe('board: frames name the login', () => {
  it('run_requested_frames_carry_the_runs_agent_id_so_a_computer_counts_and_limits_runs_per_login', () => {
    const spec = boardSpec(added('c1'), added('c2'), connected('c1'));
    const [, offered] = spec.when(submit('r1', 'A', 1, { agentId: 'alice' }))!;
    expect(framesOf({ ...offered!, seq: 7 }, spec.state)).toEqual([
      { computerId: 'c1', frame: { id: '7-c1', kind: 'run.requested', data: { run_id: 'r1', lane: 'A', computer_id: 'c1', agent_id: 'alice' } } },
    ]);
    // A computer that connects later is pushed it with its login too.
    const [online] = spec.when(connected('c2', 2))!;
    expect(framesOf({ ...online!, seq: 8 }, spec.state).map((f) => f.frame.data)).toEqual([
      { run_id: 'r1', lane: 'A', computer_id: 'c2', agent_id: 'alice' },
    ]);
  });
});

describe('board: a run left unclaimed is offered again', () => {
  it('given a run unclaimed while its lane is free (its computers skipped it, their streams up), when the offer monitor finds it stale, then it is offered again to whom a new run of its lane would go', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('r1', 'A'), submit('b1', 'B', 1), claim('b1', 'c1', 2));
    const again = spec.when(input.stale('r1', 0, 60_000));
    expect(summary(again)).toEqual(['offered r1 → c1,c2']);
    expect(said(again![0]!)).toMatchObject({ reason: 're-offered: unclaimed for 60 s with its lane free; to every connected computer (2)' });
    // Claimed meanwhile, or its lane taken by an earlier turn, or nobody connected: nothing to decide, and not recorded.
    spec.when(claim('r1', 'c2', 60_001));
    expect(boardDecider.ignores!(spec.state, input.stale('r1', 0, 120_000))).toBe(true);
    const busy = boardSpec(...computersOnline('c1'), submit('a1', 'A'), submit('a2', 'A', 1), claim('a1', 'c1', 2));
    expect(boardDecider.ignores!(busy.state, input.stale('a2', 1, 60_000))).toBe(true);
    const nobody = boardSpec(added('c1'), submit('r1', 'A'));
    expect(boardDecider.ignores!(nobody.state, input.stale('r1', 0, 60_000))).toBe(true);
  });
});
