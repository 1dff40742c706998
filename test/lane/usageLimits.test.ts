/**
 * A login's usage limit on a computer's queue (docs/rules.md#computer-behaviour, "Execution"): not a failure of the turn.
 * The run goes back to its place, still claimed, until the reset its agent gave (or 15 min doubling to
 * 2 h with the login's consecutive limits when it gave none), and the login starts nothing until then;
 * the wait is said once, with the agent's words.
 */
import { describe, expect, it } from 'vitest';
import type { QueueDecision } from '../../actors/lane/decideQueue.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import { decisionOf, decisionsOf } from '../support/deciderSpec.ts';
import { COMPUTER, input, queueSpec, summary, T0 } from '../support/queueSpec.ts';

const { configured, frame, answer, ended, timer, cancelFrame } = input;
const MIN = 60_000;

const limited = (runId: string, lane: string, at: number, resetAt?: number): NewEventOf<'run.limit.reported'> => ({
  stream: `${COMPUTER}/lane:${lane}`,
  type: 'run.limit.reported',
  data: { runId, words: "You've hit your usage limit.", ...(resetAt === undefined ? {} : { resetAt: T0 + resetAt }) },
  at: T0 + at,
});
const loginDue = (login: string, at: number): NewEventOf<'login.limit.due'> => ({
  stream: `${COMPUTER}/computer:${COMPUTER}`,
  type: 'login.limit.due',
  data: { login },
  at: T0 + at,
});
const waiting = (decisions: readonly QueueDecision[] | null) => decisionOf(decisions, 'run.limit.waiting').data;

describe('queue: a usage limit', () => {
  it('given a running run, when its agent reports the limit with a reset, then it waits in its place until then, said once', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A', 0, { agentId: 'alice' }), answer('a1', 200));
    const decisions = spec.when(limited('a1', 'A', 1000, 30 * MIN));
    expect(waiting(decisions)).toMatchObject({
      login: 'alice',
      notBefore: T0 + 30 * MIN,
      strikes: 1,
      logged: true,
      words: "You've hit your usage limit.",
    });
    expect(spec.state.runs.a1).toMatchObject({ status: 'waiting', claimHeld: true, notBefore: T0 + 30 * MIN });
    expect(spec.state.inUse).toBe(0);
  });

  it('given no reset time, then it waits 15 min, doubling with each consecutive limit of the login, at most 2 h', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 200));
    const waits: number[] = [];
    let at = 1000;
    for (let i = 0; i < 6; i++) {
      const wait = waiting(spec.when(limited('a1', 'A', at)));
      waits.push((wait.notBefore - (T0 + at)) / MIN);
      // The wait ends: it runs again (no claim), and stops at the limit again.
      at = wait.notBefore - T0;
      expect(summary(spec.when(timer('a1', at)))).toEqual(['limit.resumed a1']);
    }
    expect(waits).toEqual([15, 30, 60, 120, 120, 120]);
  });

  it('given a login at its limit, then its other runs start nothing until it lifts, while other logins’ runs go on', () => {
    const spec = queueSpec(
      configured(2),
      frame('a1', 'A', 0, { agentId: 'alice' }),
      answer('a1', 200),
      frame('b1', 'B', 0, { agentId: 'bob' }),
      answer('b1', 200),
    );
    spec.when(limited('a1', 'A', 1000, 10 * MIN));
    // Alice's run in another lane is vetoed; Bob's next turn, once his first ends, is claimed.
    expect(summary(spec.when(frame('a2', 'C', 2000, { agentId: 'alice' })))).toEqual(['ack 202 a2', 'queued a2']);
    expect(summary(spec.when(ended('b1', 3000)))).toEqual(['ended b1']);
    expect(summary(spec.when(frame('b2', 'D', 4000, { agentId: 'bob' })))).toEqual(['ack 202 b2', 'queued b2', 'claim b2 #1']);
    // At the reset: the waiting run runs again, and alice's other run is claimed with the next slot.
    expect(summary(spec.when(timer('a1', 10 * MIN)))).toEqual(['limit.resumed a1']);
    expect(summary(spec.when(ended('b2', 10 * MIN + 1)))).toEqual(['ended b2', 'claim a2 #1']);
  });

  it('given a login at its limit, when another of its runs reports it too, then it waits with it, not said again nor doubled', () => {
    const spec = queueSpec(
      configured(2),
      frame('a1', 'A', 0, { agentId: 'alice' }),
      answer('a1', 200),
      frame('a2', 'B', 0, { agentId: 'alice' }),
      answer('a2', 200),
    );
    spec.when(limited('a1', 'A', 1000));
    expect(waiting(spec.when(limited('a2', 'B', 2000)))).toMatchObject({ notBefore: T0 + 1000 + 15 * MIN, strikes: 1, logged: false });
  });

  it('given a run waiting out its limit, then it holds its lane’s turn: the lane’s next run waits behind it', () => {
    const spec = queueSpec(configured(2), frame('a1', 'A'), answer('a1', 200));
    spec.when(limited('a1', 'A', 1000, 5 * MIN));
    expect(summary(spec.when(frame('a2', 'A', 2000)))).toEqual(['ack 202 a2', 'queued a2']);
  });

  it('given a run waiting out its limit, when the board pushes its cancel, then the queue hands it to its run (202), never withdraws it', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 200));
    spec.when(limited('a1', 'A', 1000, 5 * MIN));
    const cancelled = spec.when(cancelFrame('a1', 2000));
    expect(summary(cancelled)).toEqual(['ack 202 a1']);
    // Its run completes it with the marker; its end frees the lane; the login's limit still holds.
    expect(summary(spec.when(ended('a1', 3000, false)))).toEqual(['ended a1']);
    expect(summary(spec.when(frame('a2', 'B', 4000)))).toEqual(['ack 202 a2', 'queued a2']);
    // The login's own timer wakes its other runs though no run waits it out any more.
    expect(summary(spec.when(loginDue('default', 5 * MIN)))).toEqual(['claim a2 #1']);
  });

  it('given a claim in flight as its login meets its limit, when the board grants it, then it is claimed but held: it waits out the limit in its place, and runs at the reset without a new claim', () => {
    // Two lanes of one login: a2's claim goes out while a1 runs; a1 stops at the limit before a2's answer comes.
    const spec = queueSpec(configured(2), frame('a1', 'A'), answer('a1', 200), frame('a2', 'B', 1000));
    expect(spec.state.runs.a2?.status).toBe('claiming');
    spec.when(limited('a1', 'A', 2000, 2 * MIN));
    const granted = spec.when(answer('a2', 200, 3000));
    expect(summary(granted)).toEqual(['claimed a2', 'limit.waiting a2']);
    expect(decisionOf(granted, 'run.claimed').data.heldUntil).toBe(T0 + 2 * MIN);
    expect(waiting(granted)).toMatchObject({ login: 'default', notBefore: T0 + 2 * MIN, strikes: 1, logged: false });
    expect(spec.state.runs.a2).toMatchObject({ status: 'waiting', claimHeld: true, notBefore: T0 + 2 * MIN });
    expect(spec.state.inUse).toBe(0);
    // At the reset each waiting run's timer wakes it: both run again, still claimed (no second claim of a2).
    expect(summary(spec.when(timer('a1', 2 * MIN)))).toEqual(['limit.resumed a1']);
    expect(summary(spec.when(timer('a2', 2 * MIN)))).toEqual(['limit.resumed a2']);
  });

  it('given a claim granted after its login’s limit lifted, then it starts at once, as any claim', () => {
    const spec = queueSpec(configured(2), frame('a1', 'A'), answer('a1', 200), frame('a2', 'B', 1000));
    spec.when(limited('a1', 'A', 2000, 2 * MIN));
    const granted = spec.when(answer('a2', 200, 2 * MIN));
    expect(summary(granted)).toEqual(['claimed a2']);
    expect(decisionOf(granted, 'run.claimed').data.heldUntil).toBeUndefined();
  });

  it('a login timer before its time, or for a limit nobody knows, is not even recorded', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 200));
    expect(spec.when(loginDue('default', 1000))).toBeNull();
    spec.when(limited('a1', 'A', 1000, 5 * MIN));
    expect(spec.when(loginDue('default', 5 * MIN - 1))).toBeNull();
  });

  it('a reset that passed before the queue heard of it (told again by the next life) has lifted: the run goes again at once', () => {
    // The reader keeps only resets ahead of the exit (usageLimit.ts): one already past was delayed, a
    // daemon killed between the run's `run.limit.reached` and this report, started again after it.
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 200));
    const decisions = spec.when(limited('a1', 'A', 10 * MIN, 5 * MIN));
    expect(waiting(decisions).notBefore).toBe(T0 + 10 * MIN);
    expect(summary(decisions)).toContain('limit.resumed a1');
  });

  it('a turn of the login that ends well after the limit lifted: its limits are no longer consecutive', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'), answer('a1', 200));
    spec.when(limited('a1', 'A', 0));
    spec.when(timer('a1', 15 * MIN));
    spec.when(ended('a1', 16 * MIN));
    spec.when(frame('a2', 'A', 17 * MIN));
    spec.when(answer('a2', 200, 17 * MIN));
    expect(waiting(spec.when(limited('a2', 'A', 18 * MIN))).strikes).toBe(1);
  });

  it('a report for a run that is not running here decides nothing', () => {
    const spec = queueSpec(configured(1), frame('a1', 'A'));
    expect(spec.when(limited('a1', 'A', 1000))).toBeNull();
    expect(decisionsOf(spec.when(limited('ghost', 'A', 1000)), 'run.limit.waiting')).toEqual([]);
  });
});
