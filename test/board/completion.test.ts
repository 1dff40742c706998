import { describe, expect, it } from 'vitest';
import { requestAnswer } from '../../actors/board/boardAnswers.ts';
import { heartbeatAnswer, runView } from '../../actors/board/boardQueries.ts';
import { pastOf } from '../../actors/board/settledRun.ts';
import { boardSpec, computersOnline, input, said, summary } from './boardSpec.ts';

const { submit, claim, complete, reply } = input;

const claimed = () => boardSpec(...computersOnline('c1', 'c2'), submit('r1', 'A'), claim('r1', 'c1'));

describe('board: replies and completions', () => {
  it('given a claimed run, when it completes ok, then it succeeded; a second completion is refused 409 already terminal', () => {
    const spec = claimed();
    const done = spec.when(complete('r1', 'c1', true, undefined, 1));
    expect(summary(done)).toEqual(['finished r1 succeeded']);
    expect(requestAnswer(done!)).toEqual({ status: 200, runId: 'r1' });
    expect(spec.view('r1')).toEqual({ run_id: 'r1', lane: 'A', state: 'succeeded', computer_id: 'c1' });
    const twice = spec.when(complete('r1', 'c1', false, 'boom', 2));
    expect(summary(twice)).toEqual(['refused complete 409 already_terminal']);
    expect(spec.view('r1')).toMatchObject({ state: 'succeeded' });
    // Settled, it left the state: its heartbeat is answered from its end in the log.
    expect(spec.state.runs.r1).toBeUndefined();
    expect(heartbeatAnswer(spec.state, 'r1', 'c1', pastOf(spec.settled('r1')) ?? undefined)).toEqual({ status: 410, code: 'resolved' });
    expect(heartbeatAnswer(spec.state, 'r1', 'c2', pastOf(spec.settled('r1')) ?? undefined)).toEqual({ status: 409, code: 'not_holder' });
  });

  it('given a claimed run, when another computer completes it, then it is refused 409 and the run goes on', () => {
    const spec = claimed();
    const wrong = spec.when(complete('r1', 'c2', true));
    expect(summary(wrong)).toEqual(['refused complete 409 not_holder']);
    expect(said(wrong![0]!)).toMatchObject({ reason: 'c2 does not hold run r1: its claim is held by c1' });
    expect(runView(spec.state, 'r1')).toMatchObject({ state: 'claimed' });
  });

  it('given an unclaimed or unknown run, when a completion comes, then 409 not_holder / 404', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'));
    expect(summary(spec.when(complete('r1', 'c1', true)))).toEqual(['refused complete 409 not_holder']);
    expect(summary(spec.when(complete('ghost', 'c1', true)))).toEqual(['refused complete 404 unknown_run']);
  });

  it('given a failed completion, then the run failed with its error; only the exact marker means cancelled', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), submit('r2', 'B'), claim('r1', 'c1'), claim('r2', 'c1'));
    expect(summary(spec.when(complete('r1', 'c1', false, 'timed out after 2 h\n…tail')))).toEqual(['finished r1 failed']);
    expect(spec.view('r1')).toMatchObject({ state: 'failed', error: 'timed out after 2 h\n…tail' });
    expect(summary(spec.when(complete('r2', 'c1', false, 'cancelled_by_user ')))).toEqual(['finished r2 failed']);
  });

  it('given a claimed run, when its reply comes, then it is stored and the run is running; a later reply replaces it', () => {
    const spec = claimed();
    const replied = spec.when(reply('r1', 'c1', 'first', 1));
    expect(summary(replied)).toEqual(['replied r1']);
    expect(requestAnswer(replied!)).toEqual({ status: 200, runId: 'r1' });
    expect(runView(spec.state, 'r1')).toEqual({ run_id: 'r1', lane: 'A', state: 'running', computer_id: 'c1', reply: 'first' });
    spec.when(reply('r1', 'c1', 'second', 2));
    spec.when(complete('r1', 'c1', true, undefined, 3));
    // Terminal: the run left the state (issue 16); GET reads it, its last reply included, from its stream.
    expect(spec.state.runs.r1).toBeUndefined();
    expect(runView(spec.state, 'r1')).toBeNull();
    expect(spec.view('r1')).toEqual({
      run_id: 'r1',
      lane: 'A',
      state: 'succeeded',
      computer_id: 'c1',
      reply: 'second',
    });
  });

  it('given a reply from a computer that does not hold the run, for a terminal run or an unknown one, then it is refused', () => {
    const spec = claimed();
    expect(summary(spec.when(reply('r1', 'c2', 'mine')))).toEqual(['refused reply 409 not_holder']);
    spec.when(complete('r1', 'c1', true));
    expect(summary(spec.when(reply('r1', 'c1', 'late')))).toEqual(['refused reply 409 already_terminal']);
    expect(summary(spec.when(reply('ghost', 'c1', 'x')))).toEqual(['refused reply 404 unknown_run']);
    expect(spec.view('r1')).not.toHaveProperty('reply');
  });
});
