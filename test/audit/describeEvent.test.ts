import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../events/catalog.ts';
import { describeEvent } from '../../projections/audit/describeEvent.ts';
import { T0 } from '../support/queueSpec.ts';

/** An event as read back from the log, for the describer: only type, data and stream matter to it. */
function stored(type: string, data: unknown, stream = 'c1/run:r1'): DomainEvent {
  return { seq: 1, stream, version: 1, type, data, at: T0, cause: null, actor: 'test:1' } as DomainEvent;
}

describe('audit: one sentence an event', () => {
  it.each([
    ['claim.answered', { runId: 'r1', status: 409, code: 'conversation_busy' }, 'the board answered the claim: 409 conversation_busy'],
    ['claim.answered', { runId: 'r1', status: 0 }, 'the claim got no answer: network error'],
    ['frame.acknowledged', { frameId: 'f1', status: 202, reason: 'queued' }, 'frame acknowledged 202: queued'],
    [
      'run.parked',
      {
        runId: 'r1',
        busyWaits: 2,
        notBefore: T0 + 12 * 3_600_000 + 30_000,
        reason: 'waits: an earlier turn of its conversation is still open',
        logged: false,
      },
      'waits: an earlier turn of its conversation is still open (until 12:00:30, wait 2)',
    ],
    [
      'run.claim.retrying',
      { runId: 'r1', claimAttempts: 1, notBefore: T0 + 2000, reason: 'the claim failed (503): tried again in 2 s' },
      'the claim failed (503): tried again in 2 s (attempt 2 at 00:00:02)',
    ],
    ['run.skipped', { runId: 'r1', reason: 'skipped: another computer has it' }, 'skipped: another computer has it'],
    [
      'run.withdrawn',
      { runId: 'r1', reason: 'withdrawn: cancelled on the board before it was claimed' },
      'withdrawn: cancelled on the board before it was claimed',
    ],
    ['run.ended', { runId: 'r1', ok: false, reason: 'failed: exit 1' }, 'ended: failed: exit 1'],
    ['frame.received', { frameId: 'c-1', kind: 'run.cancelled', runId: 'r1' }, 'the board announced its cancel (frame c-1)'],
  ])('%s %j → %s', (type, data, sentence) => {
    expect(describeEvent(stored(type, data))).toBe(sentence);
  });

  it('keeps a reason that spans lines, or pages, to one bounded line', () => {
    const line = describeEvent(stored('run.start.failed', { runId: 'r1', reason: `spawn failed\n  at exec\n${'x'.repeat(1000)}` }));
    expect(line).not.toMatch(/[\r\n]/);
    expect(line.startsWith('the run could not start: spawn failed ⏎ at exec ⏎ xxx')).toBe(true);
    expect(line.length).toBeLessThanOrEqual(300);
  });
});
