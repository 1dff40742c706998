import { describe, expect, it } from 'vitest';
import { framesOf, requestAnswer } from '../../actors/board/boardAnswers.ts';
import { cancelAnswer, cancelRequested, heartbeatAnswer, runView } from '../../actors/board/boardQueries.ts';
import { boardSpec, computersOnline, input, pushed, said, summary } from './boardSpec.ts';

const { submit, claim, complete, cancel, started } = input;

describe('board: cancel', () => {
  it('a cancel of a claimed run is pushed to the computer holding it as run.cancel_requested, once', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('r1', 'A'), claim('r1', 'c1'));
    const first = spec.when(cancel('r1', 1));
    expect(pushed(first, spec.state)).toEqual(['run.cancel_requested r1 → c1']);
    expect(framesOf({ ...first![0]!, seq: 12 }, spec.state)).toEqual([
      { computerId: 'c1', frame: { id: '12-c1', kind: 'run.cancel_requested', data: { run_id: 'r1' } } },
    ]);
    // The pending cancel is already pushed: asked again, nothing goes out twice.
    expect(pushed(spec.when(cancel('r1', 2)), spec.state)).toEqual([]);
  });

  it('a pending cancel says it was pushed to its holder; one recorded by an older board (no push) is decided the same (its words are not compared by replay)', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), claim('r1', 'c1'), submit('r2', 'B'), claim('r2', 'c1'));
    const pushed = spec.when(cancel('r1', 1));
    expect(said(pushed![0]!)).toMatchObject({ reason: 'cancel requested: pushed to c1, and said again by its next heartbeat' });
    const older = spec.when({ stream: 'run:r2', type: 'board.cancel.requested', data: { runId: 'r2' }, at: 2 });
    expect(older![0]!.data).toEqual({ ...pushed![0]!.data, runId: 'r2' });
  });

  it('a computer connecting while a cancel of a run it holds is pending is pushed run.cancel_requested', () => {
    const spec = boardSpec(
      ...computersOnline('c1', 'c2'),
      submit('r1', 'A'),
      submit('r2', 'B'),
      claim('r1', 'c1'),
      claim('r2', 'c2'),
      cancel('r1', 1),
      cancel('r2', 1),
    );
    spec.when(input.disconnected('c1', 2));
    const back = spec.when(input.connected('c1', 3));
    expect(pushed(back, spec.state)).toEqual(['run.cancel_requested r1 → c1']);
    // Once it is terminal, a reconnect is told nothing of it.
    spec.when(complete('r1', 'c1', false, 'cancelled_by_user', 4));
    spec.when(input.disconnected('c1', 5));
    expect(pushed(spec.when(input.connected('c1', 6)), spec.state)).toEqual([]);
  });

  it('the cancel answer says what the board decided: stopping on its holder, or withdrawn before it was claimed', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), claim('r1', 'c1'), submit('r2', 'B'), cancel('r1', 1), cancel('r2', 1));
    expect(cancelAnswer(spec.state, 'r1')).toEqual({ run_id: 'r1', state: 'claimed', computer_id: 'c1', detail: 'stopping on c1' });
    // Withdrawn before its claim, it settled and left the state: the host answers from its stream.
    expect(cancelAnswer(spec.state, 'r2')).toBeNull();
    expect(cancelAnswer(spec.state, 'r2', spec.settled('r2'))).toEqual({
      run_id: 'r2',
      state: 'cancelled',
      detail: 'withdrawn before it was claimed',
    });
    expect(cancelAnswer(spec.state, 'ghost')).toBeNull();
  });

  it('given a queued unclaimed run, when it is cancelled, then it is cancelled at once and announced to every computer it was offered to', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('r1', 'A'), input.draining('r1', 'c1', 1));
    const decisions = spec.when(cancel('r1', 2));
    expect(summary(decisions)).toEqual(['cancelled r1 → c1,c2']);
    expect(requestAnswer(decisions!)).toEqual({ status: 202, runId: 'r1' });
    expect(spec.view('r1')).toEqual({ run_id: 'r1', lane: 'A', state: 'cancelled', error: 'cancelled_by_user' });
    expect(spec.state.waiting).toEqual({});
  });

  it('given a run never offered (nobody connected), when it is cancelled, then there is nobody to tell', () => {
    const spec = boardSpec(input.added('c1'), submit('r1', 'A'));
    expect(summary(spec.when(cancel('r1')))).toEqual(['cancelled r1 → (nobody)']);
    expect(summary(spec.when(input.connected('c1')))).toEqual(['online c1']);
  });

  it('given a claimed run, when it is cancelled, then the cancel is pending and its heartbeat answer says so; a second cancel is accepted again with nothing new', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), claim('r1', 'c1'));
    const first = spec.when(cancel('r1', 1));
    expect(summary(first)).toEqual(['cancel pending r1']);
    expect(requestAnswer(first!)).toEqual({ status: 202, runId: 'r1' });
    expect(cancelRequested(spec.state, 'r1')).toBe(true);
    expect(heartbeatAnswer(spec.state, 'r1', 'c1')).toEqual({ status: 200, cancelRequested: true, markRunning: true });
    expect(runView(spec.state, 'r1')).toMatchObject({ state: 'claimed' });

    const before = JSON.stringify(spec.state);
    const second = spec.when(cancel('r1', 2));
    expect(summary(second)).toEqual(['repeated cancel 202']);
    expect(requestAnswer(second!)).toEqual({ status: 202, runId: 'r1' });
    expect(JSON.stringify(spec.state)).toBe(before);

    // The daemon completes it with the marker: cancelled, and the cancel is no longer pending.
    expect(summary(spec.when(complete('r1', 'c1', false, 'cancelled_by_user', 3)))).toEqual(['finished r1 cancelled']);
    expect(spec.view('r1')).toEqual({ run_id: 'r1', lane: 'A', state: 'cancelled', computer_id: 'c1', error: 'cancelled_by_user' });
    expect(cancelRequested(spec.state, 'r1')).toBe(false);
  });

  it('given a running run, when it is cancelled, then the cancel is pending too', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), claim('r1', 'c1'), started('r1', 'c1'));
    expect(summary(spec.when(cancel('r1', 1)))).toEqual(['cancel pending r1']);
    expect(cancelRequested(spec.state, 'r1')).toBe(true);
  });

  it('given a terminal run, when it is cancelled, then 409; an unknown run, 404', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), claim('r1', 'c1'), complete('r1', 'c1', true));
    const terminal = spec.when(cancel('r1', 1));
    expect(summary(terminal)).toEqual(['refused cancel 409 already_terminal']);
    expect(requestAnswer(terminal!)).toEqual({ status: 409, code: 'already_terminal', reason: 'run r1 is already succeeded' });
    expect(summary(spec.when(cancel('ghost', 1)))).toEqual(['refused cancel 404 unknown_run']);
    const cancelled = boardSpec(submit('r2', 'A'), cancel('r2'));
    expect(summary(cancelled.when(cancel('r2', 1)))).toEqual(['refused cancel 409 already_terminal']);
  });

  it('given a cancel pending, when the run completes ok anyway, then it succeeded', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), claim('r1', 'c1'), cancel('r1'));
    expect(summary(spec.when(complete('r1', 'c1', true)))).toEqual(['finished r1 succeeded']);
  });
});
