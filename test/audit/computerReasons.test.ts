import { describe, expect, it } from 'vitest';
import { decideQueue } from '../../actors/lane/decideQueue.ts';
import { codec, type DomainEvent } from '../../events/catalog.ts';
import { auditSummaryProjection } from '../../projections/audit/summary.ts';
import { decisionOf } from '../support/deciderSpec.ts';
import { COMPUTER, input, queueSpec, T0 } from '../support/queueSpec.ts';
import { stored, wordsAsRecorded } from '../support/reasonCases.ts';

/**
 * The computer's groups record their reasons as codes with parameters, as the board does
 * (docs/replay-and-audit.md#reasons-as-codes): the audit words a code as the sentence older versions
 * recorded, and reads an older version's sentence as it was written.
 */
describe("the queue's reasons: codes, worded by the audit", () => {
  wordsAsRecorded([
    ['frame.acknowledged', { frameId: 'f1', runId: 'r1', status: 202, reason: { code: 'queued' } }, 'frame acknowledged 202: queued'],
    [
      'frame.acknowledged',
      { frameId: 'f1', runId: 'r1', status: 200, reason: { code: 'ignored.status', run: 'r1', status: 'claiming' } },
      'frame acknowledged 200: ignored: run r1 is claiming here',
    ],
    [
      'run.skipped',
      { runId: 'r1', reason: { code: 'refused', status: 403, answer: 'forbidden' } },
      'skipped: the claim was refused (403: forbidden)',
    ],
    [
      'run.skipped',
      { runId: 'r1', reason: { code: 'failed.often', attempts: 5, why: '502' }, retry: true },
      'skipped: the claim failed 5 times (last: 502)',
    ],
    [
      'run.limit.waiting',
      {
        runId: 'r1',
        login: 'claude',
        notBefore: 60_000,
        strikes: 1,
        words: 'limit',
        reason: { code: 'limit.no.reset', login: 'claude', waitMin: 15 },
        logged: true,
      },
      'waits: login claude reached its usage limit, no reset time given: tried again in 15 min (until 00:01:00, limit 1 in a row): “limit”',
    ],
    ['run.ended', { runId: 'r1', ok: false, reason: { code: 'failed', error: 'boom' } }, 'ended: failed: boom'],
    ['run.ended', { runId: 'r1', ok: true, reason: { code: 'finished' } }, 'ended: finished'],
    // An older version's sentence is shown as it was written.
    ['run.ended', { runId: 'r1', ok: true, reason: 'finished' }, 'ended: finished'],
  ]);

  it('the summary counts a reason by its words: a code and the sentence an older version recorded are one reason', () => {
    let state = auditSummaryProjection.initial();
    const queued = stored('run.queued', { runId: 'r1', lane: 'A', agentId: null, arrival: 0 });
    state = auditSummaryProjection.evolve(state, queued);
    state = auditSummaryProjection.evolve(state, stored('run.skipped', { runId: 'r1', reason: { code: 'claimed.elsewhere' } }));
    state = auditSummaryProjection.evolve(state, { ...queued, data: { ...queued.data, runId: 'r2' } } as DomainEvent);
    state = auditSummaryProjection.evolve(state, stored('run.skipped', { runId: 'r2', reason: 'skipped: another computer has it' }));
    expect(state.computers.outcomes.skipped.reasons).toEqual({ 'skipped: another computer has it': 2 });
  });

  it('a reason of an unknown code, or with a parameter missing, is refused before it is written, naming the field', () => {
    const event = (reason: unknown) => ({ stream: 'c1/lane:A', at: 0, type: 'run.withdrawn', data: { runId: 'r1', reason } });
    expect(() => codec.checkNew(event({ code: 'no.such.code' }))).toThrow(/reason/);
    expect(() => codec.checkNew(event({ code: 'limit.lifted' }))).toThrow(/reason/);
    expect(() => codec.checkNew(event({ code: 'limit.lifted', login: 'claude' }))).not.toThrow();
  });
});

describe("the run's reasons: codes, worded by the audit", () => {
  wordsAsRecorded([
    ['run.cancel.decided', { runId: 'r1', reason: { code: 'cancel.pushed' } }, 'the board pushed a cancel'],
    [
      'run.completion.retrying',
      { runId: 'r1', attempt: 2, notBefore: 5_000, reason: { code: 'completion.failed', status: 0, waitS: 5 } },
      'completion failed (network error): tried again in 5 s (next try at 00:00:05)',
    ],
    [
      'run.settled',
      { runId: 'r1', reported: false, reason: { code: 'local', ok: false, error: 'boom' }, result: { ok: false, error: 'boom' } },
      'settled, not reported: a local turn (runledger run), no board to report to: failed: boom',
    ],
    [
      'lane.session.forgotten',
      { lane: 'A', sessionId: 's1', runId: 'r1', reason: { code: 'turn.ended', moment: 'timed_out' } },
      'lane A forgets session s1: its turn timed_out',
    ],
    // An older version's sentence is shown as it was written.
    [
      'run.settled',
      { runId: 'r1', reported: true, reason: 'the board acknowledged its completion' },
      'settled, reported to the board: the board acknowledged its completion',
    ],
  ]);

  it("a run resolved before it ran ends in its queue with the run's reason, in words", () => {
    const spec = queueSpec(input.configured(1), input.frame('r1', 'A'), input.answer('r1', 200));
    // The run's settle is a message to the queue (its committed decision), decided as it is by the runtime.
    const decisions = decideQueue(spec.state, {
      stream: `${COMPUTER}/run:r1`,
      type: 'run.settled',
      data: { runId: 'r1', reported: false, reason: { code: 'resolved' } },
      at: T0 + 10,
    });
    expect(decisionOf(decisions, 'run.ended').data).toEqual({
      runId: 'r1',
      ok: false,
      reason: { code: 'failed', error: 'resolved on the board: nothing posted' },
    });
  });
});

describe("a session close's reasons: codes, worded by the audit", () => {
  wordsAsRecorded([
    [
      'session.close.intended',
      { sessionId: 'S1', runId: 'r1', reason: { code: 'stands', run: 'r1', lane: 'A', bound: true } },
      'close intended: run r1 of lane A ended: the close already asked for stands',
    ],
    [
      'session.close.claimed',
      { sessionId: 'S1', lock: 'vm:1', expires: 60_000, reason: { code: 'taken.over', from: 'vm:2', expired: true, unanswered: 1 } },
      "close claimed by vm:1 until 00:01:00: claimed over vm:2's, which no longer holds (expired); the kill of attempt 1 was never answered, so it is read again",
    ],
    [
      'session.close.deferred',
      {
        sessionId: 'S1',
        attempt: 2,
        reason: { code: 'watching', quietMs: 120_000, watchedMs: 30_000, restarted: 'stale', seen: 'pane %1' },
        unread: { since: 0, mark: 0, seen: 0 },
      },
      'close deferred (attempt 2): its session publishes no turn (pane %1); it closes once it is read idle, or after 120 s watched with nothing written to its record (30 s so far) (the last reading was too long ago: the watch starts again)',
    ],
    [
      'session.closed',
      { sessionId: 'S1', attempt: 1, reason: { code: 'idle', nothingLeft: true } },
      'closed (attempt 1): read idle, between turns; nothing was left to stop',
    ],
    // An older version's sentence is shown as it was written.
    ['session.closed', { sessionId: 'S1', attempt: 1, reason: 'stopped (pane %1 killed)' }, 'closed (attempt 1): stopped (pane %1 killed)'],
  ]);
});
