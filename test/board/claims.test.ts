import { describe, expect, it } from 'vitest';
import { requestAnswer } from '../../actors/board/boardAnswers.ts';
import { claimedRunBody, heartbeatAnswer, holder, openClaims, runView } from '../../actors/board/boardQueries.ts';
import { pastOf } from '../../actors/board/settledRun.ts';
import { boardSpec, computersOnline, input, said, summary, T0 } from './boardSpec.ts';

const { submit, claim, complete, lapsed, started, cancel } = input;

describe('board: claims', () => {
  it('given a run offered to two computers, when both claim it, then exactly one claim succeeds and the other is claimed_elsewhere, answered and not recorded', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('r1', 'A'));
    const first = spec.when(claim('r1', 'c2', 1));
    expect(summary(first)).toEqual(['claimed r1 by c2']);
    expect(requestAnswer(first!)).toEqual({ status: 200, runId: 'r1' });
    // The loser's refusal changes nothing the board keeps: answered, never recorded (docs/rules.md#dispatch).
    expect(summary(spec.when(claim('r1', 'c1', 2)))).toEqual(['(ignored)']);
    expect(requestAnswer(spec.unrecorded(claim('r1', 'c1', 2)))).toMatchObject({ status: 409, code: 'claimed_elsewhere' });
    expect(holder(spec.state, 'r1')).toBe('c2');
    expect(runView(spec.state, 'r1')).toEqual({ run_id: 'r1', lane: 'A', state: 'claimed', computer_id: 'c2' });
    expect(claimedRunBody(spec.state, 'r1')).toEqual({ run_id: 'r1', lane: 'A', prompt: 'prompt of r1', agent_id: null, timeout_s: null });
  });

  it('given a run claimed by c1, when c1 claims it again (its answer was lost), then it is granted again and nothing changes', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), claim('r1', 'c1', 1));
    const before = JSON.stringify(spec.state);
    const again = spec.when(claim('r1', 'c1', 2));
    expect(summary(again)).toEqual(['repeated claim 200']);
    expect(requestAnswer(again!)).toEqual({ status: 200, runId: 'r1' });
    expect(JSON.stringify(spec.state)).toBe(before);
  });

  it('given an unknown run, a terminal run, or an unknown computer, then the claim is refused 404 / 410 (answered, not recorded) / 404', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('r1', 'A'), claim('r1', 'c1'), complete('r1', 'c1', true));
    expect(summary(spec.when(claim('nope', 'c1')))).toEqual(['refused claim 404 unknown_run']);
    for (const late of [claim('r1', 'c1'), claim('r1', 'c2')]) {
      expect(summary(spec.when(late))).toEqual(['(ignored)']);
      expect(summary(spec.unrecorded(late))).toEqual(['refused claim 410 gone']);
    }
    expect(summary(spec.when(claim('r1', 'c9')))).toEqual(['refused claim 404 unknown_computer']);
  });

  it('given a run cancelled before it was claimed, when a computer claims it, then it is gone (410)', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), cancel('r1', 1));
    const refused = spec.unrecorded(claim('r1', 'c1', 2));
    expect(summary(refused)).toEqual(['refused claim 410 gone']);
    expect(said(refused[0]!)).toMatchObject({ reason: 'run r1 was cancelled before it was claimed' });
  });

  it('every refusal is recorded in the stream of the request, with its reason', () => {
    const spec = boardSpec(...computersOnline('c1'));
    const [refusal] = spec.when(claim('ghost', 'c1', 5))!;
    expect(refusal).toEqual({
      stream: 'run:ghost',
      at: T0 + 5,
      type: 'board.request.refused',
      data: { request: 'claim', runId: 'ghost', computerId: 'c1', status: 404, code: 'unknown_run', reason: { code: 'unknown_run', run: 'ghost' } },
    });
    expect(said(refusal!).reason).toBe('no run ghost on this board');
  });
});

describe('board: a lane is one conversation', () => {
  it('given an earlier turn claimed and open, when a later run of its lane is claimed, then conversation_busy; when the turn ends, the waiter is resent', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('r1', 'A'), submit('r2', 'A', 1), submit('b1', 'B', 2), claim('r1', 'c1', 3));
    const busy = spec.when(claim('r2', 'c2', 4));
    expect(summary(busy)).toEqual(['refused claim 409 conversation_busy']);
    expect(requestAnswer(busy!)).toMatchObject({ status: 409, code: 'conversation_busy' });
    expect(said(busy![0]!)).toMatchObject({ reason: 'an earlier turn of lane A (run r1) is claimed by c1' });
    // Another lane is not held up.
    expect(summary(spec.when(claim('b1', 'c2', 5)))).toEqual(['claimed b1 by c2']);
    // The turn ends: r2's frame is resent, to c1 only (it ran the lane's last turn and is connected).
    const ended = spec.when(complete('r1', 'c1', true, undefined, 6));
    expect(summary(ended)).toEqual(['finished r1 succeeded', 'offered r2 → c1']);
    expect(said(ended![1]!)).toMatchObject({ reason: 'resent: the turn it waited for (run r1) ended; to c1, which ran the last turn of lane A' });
    expect(summary(spec.when(claim('r2', 'c2', 7)))).toEqual(['claimed r2 by c2']);
  });

  it('given a later run of a lane claimed first, when the earlier run is claimed, then it is busy too: never two open turns in a lane', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('r1', 'A'), submit('r2', 'A', 1), claim('r2', 'c2', 2));
    const busy = spec.when(claim('r1', 'c1', 3));
    expect(summary(busy)).toEqual(['refused claim 409 conversation_busy']);
    expect(said(busy![0]!)).toMatchObject({ reason: 'another turn of lane A (run r2) is claimed by c2' });
  });

  it('given no claim was told busy, when the turn ends, then nothing is resent', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), submit('r2', 'A', 1), claim('r1', 'c1', 2));
    expect(summary(spec.when(complete('r1', 'c1', false, 'exit 1', 3)))).toEqual(['finished r1 failed']);
  });

  it('given two waiters, when the turn ends, then both are resent, oldest first, and a waiter cancelled meanwhile is not', () => {
    const spec = boardSpec(
      ...computersOnline('c1', 'c2'),
      submit('r1', 'A'),
      submit('r2', 'A'),
      submit('r3', 'A'),
      submit('r4', 'A'),
      claim('r1', 'c1'),
      claim('r4', 'c2'),
      claim('r3', 'c2'),
      claim('r2', 'c2'),
      claim('r3', 'c1'),
      cancel('r4'),
    );
    // c1 ran the lane's last turn but left: the resend goes to every connected computer.
    spec.when(input.disconnected('c1', 1));
    expect(summary(spec.when(lapsed('r1', 0, 90_000)))).toEqual(['resolved r1', 'offered r2 → c2', 'offered r3 → c2']);
  });
});

describe('board: leases', () => {
  it('given a claimed run whose heartbeats stopped, when the lease lapses, then it is resolved naming the last heartbeat and its lane moves on', () => {
    const spec = boardSpec(...computersOnline('c1', 'c2'), submit('r1', 'A'), submit('r2', 'A', 1), claim('r1', 'c1', 2), claim('r2', 'c2', 3));
    expect(openClaims(spec.state)).toEqual([{ runId: 'r1', computerId: 'c1', claimedAt: T0 + 2 }]);
    const reaped = spec.when(lapsed('r1', 30_000, 125_000));
    expect(summary(reaped)).toEqual(['resolved r1', 'offered r2 → c1']);
    expect(reaped![0]!.data).toEqual({
      runId: 'r1',
      computerId: 'c1',
      lastHeartbeatAt: T0 + 30_000,
      reason: { code: 'reaped', computer: 'c1', lastHeartbeatAt: T0 + 30_000, silentS: 95 },
    });
    expect(said(reaped![0]!).reason).toBe('reaped: no heartbeat from c1 since 2026-01-01T00:00:30.000Z (95 s)');
    expect(spec.view('r1')).toMatchObject({ state: 'resolved', computer_id: 'c1' });
    expect(heartbeatAnswer(spec.state, 'r1', 'c1', pastOf(spec.settled('r1')) ?? undefined)).toEqual({ status: 410, code: 'resolved' });
    expect(holder(spec.state, 'r1')).toBeNull();
    expect(openClaims(spec.state)).toEqual([]);
    expect(summary(spec.when(claim('r2', 'c2', 126_000)))).toEqual(['claimed r2 by c2']);
    // Its completion comes too late: the run is terminal.
    expect(summary(spec.when(complete('r1', 'c1', true, undefined, 127_000)))).toEqual(['refused complete 409 already_terminal']);
  });

  it('given a lapse for a run that ended meanwhile, or one never claimed, then it is ignored and not recorded', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), submit('r2', 'A'), claim('r1', 'c1'), complete('r1', 'c1', true));
    expect(summary(spec.when(lapsed('r1', 0, 90_000)))).toEqual(['(ignored)']);
    expect(summary(spec.when(lapsed('r2', 0, 90_000)))).toEqual(['(ignored)']);
    expect(summary(spec.when(lapsed('ghost', 0, 90_000)))).toEqual(['(ignored)']);
  });

  it('given a claimed run, when its first heartbeat comes, then it is running once; later ones record nothing', () => {
    const spec = boardSpec(...computersOnline('c1'), submit('r1', 'A'), claim('r1', 'c1'));
    expect(heartbeatAnswer(spec.state, 'r1', 'c1')).toEqual({ status: 200, cancelRequested: false, markRunning: true });
    expect(summary(spec.when(started('r1', 'c1', 1)))).toEqual(['running r1']);
    expect(runView(spec.state, 'r1')).toMatchObject({ state: 'running' });
    expect(heartbeatAnswer(spec.state, 'r1', 'c1')).toEqual({ status: 200, cancelRequested: false, markRunning: false });
    expect(summary(spec.when(started('r1', 'c1', 2)))).toEqual(['(ignored)']);
    expect(summary(spec.when(started('r1', 'c2', 2)))).toEqual(['(ignored)']);
    expect(heartbeatAnswer(spec.state, 'r1', 'c2')).toEqual({ status: 409, code: 'not_holder' });
    expect(heartbeatAnswer(spec.state, 'ghost', 'c1')).toEqual({ status: 404, code: 'unknown_run' });
    expect(openClaims(spec.state)).toEqual([{ runId: 'r1', computerId: 'c1', claimedAt: T0 }]);
  });
});
