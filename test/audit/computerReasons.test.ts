import { describe, expect, it } from 'vitest';
import { decideQueue } from '../../actors/lane/decideQueue.ts';
import { codec, type DomainEvent } from '../../events/catalog.ts';
import { describeEvent } from '../../projections/audit/describeEvent.ts';
import { auditSummaryProjection } from '../../projections/audit/summary.ts';
import { decisionOf } from '../support/deciderSpec.ts';
import { COMPUTER, input, queueSpec, T0 } from '../support/queueSpec.ts';

/**
 * The computer's groups record their reasons as codes with parameters, as the board does
 * (docs/replay-and-audit.md#reasons-as-codes): the audit words a code as the sentence older versions
 * recorded, and reads an older version's sentence as it was written.
 */
function stored(type: string, data: unknown, stream = 'c1/lane:A'): DomainEvent {
  return { seq: 1, stream, version: 1, type, data, at: 0, cause: null, actor: 'test:1' } as DomainEvent;
}

type Case = [string, Record<string, unknown>, string];

function wordsAsRecorded(cases: Case[]) {
  it.each<Case>(cases)('%s %j → %s', (type, data, sentence) => {
    expect(codec.decodeData(1, type, data)).toEqual(data);
    expect(describeEvent(stored(type, data))).toBe(sentence);
  });
}

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
