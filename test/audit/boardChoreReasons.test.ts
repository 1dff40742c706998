import { describe, expect, it } from 'vitest';
import { codec } from '../../events/catalog.ts';
import { wordsAsRecorded } from '../support/reasonCases.ts';

/**
 * The board's adoptions and notices record their reasons as codes with parameters, as its runs do
 * (docs/replay-and-audit.md#reasons-as-codes): the audit words a code as the sentence older versions
 * recorded, and reads an older version's sentence as it was written.
 */
const lane = { lane: 'L', request: 1, sessionId: 'S1' };

describe("an adoption's reasons: codes, worded by the audit", () => {
  wordsAsRecorded(
    [
      [
        'adoption.claimed',
        { ...lane, computerId: 'c7', lock: 'vm:2', expires: 60_000, reason: { code: 'claimed', lock: 'vm:2', session: 'S1', listedOn: 'c7' } },
        'claimed by vm:2 to bind session S1 (listed on c7) (until 00:01:00)',
      ],
      [
        'adoption.claimed',
        {
          ...lane,
          computerId: 'c7',
          lock: 'vm:2',
          expires: 60_000,
          reason: { code: 'claimed', lock: 'vm:2', session: 'S1', listedOn: 'c7', lapsed: 'vm:9' },
        },
        'claimed by vm:2 to bind session S1 (listed on c7), after the claim of vm:9 lapsed (until 00:01:00)',
      ],
      [
        'adoption.waiting',
        { ...lane, until: 180_000, reason: { code: 'not.listed', session: 'S1', error: null, windowS: 180 } },
        'session S1 is not listed on any computer: it waits up to 180 s from the request (until 00:03:00)',
      ],
      [
        'adoption.waiting',
        { ...lane, until: 180_000, reason: { code: 'not.listed', session: 'S1', error: 'tmux: server busy', windowS: 180 } },
        'the session listing could not be read (tmux: server busy): it waits up to 180 s from the request (until 00:03:00)',
      ],
      [
        'adoption.failed',
        { ...lane, reason: { code: 'window.closed', session: 'S1', error: null, afterS: 180 } },
        'the adoption of session S1 failed: session S1 is not listed on any computer, 180 s after the request',
      ],
      [
        'adoption.failed',
        { ...lane, reason: { code: 'window.closed', session: 'S1', error: 'tmux: server busy', afterS: 200 } },
        'the adoption of session S1 failed: the session listing could not be read (tmux: server busy), 200 s after the request',
      ],
      [
        'adoption.adopted',
        { ...lane, computerId: 'c7', reason: { code: 'adopted', lane: 'L', session: 'S1', computer: 'c7' } },
        "adopted: lane L's next turns run in session S1 on c7",
      ],
      [
        'adoption.failed',
        { ...lane, reason: { code: 'bind.failed', error: 'tmux: no such pane' } },
        'the adoption of session S1 failed: the bind failed: tmux: no such pane',
      ],
      [
        'adoption.failed',
        { ...lane, reason: { code: 'bind.failed', error: null } },
        'the adoption of session S1 failed: the bind failed: no reason given',
      ],
      // An older version's sentence is shown as it was written.
      ['adoption.failed', { ...lane, reason: 'the bind failed: gone' }, 'the adoption of session S1 failed: the bind failed: gone'],
    ],
    'lane:L',
  );

  it('a reason of an unknown code, or with a parameter missing, is refused before it is written, naming the field', () => {
    const event = (reason: unknown) => ({ stream: 'lane:L', at: 0, type: 'adoption.failed', data: { ...lane, reason } });
    expect(() => codec.checkNew(event({ code: 'no.such.code' }))).toThrow(/reason/);
    expect(() => codec.checkNew(event({ code: 'window.closed', session: 'S1', error: null }))).toThrow(/reason/);
    expect(() => codec.checkNew(event({ code: 'window.closed', session: 'S1', error: null, afterS: 180 }))).not.toThrow();
  });
});

describe("an inbox's reasons: codes, worded by the audit", () => {
  wordsAsRecorded(
    [
      [
        'inbox.waiting',
        { sessionId: 'S9', reason: { code: 'liveness.unreadable', session: 'S9', detail: 'tmux: server busy', notices: 1 } },
        'the liveness of session S9 could not be read (tmux: server busy): 1 notice waits until it can be',
      ],
      [
        'inbox.waiting',
        { sessionId: 'S9', reason: { code: 'liveness.unreadable', session: 'S9', detail: null, notices: 3 } },
        'the liveness of session S9 could not be read: 3 notices wait until it can be',
      ],
      [
        'inbox.withheld',
        { sessionId: 'S1', reason: { code: 'not.running', session: 'S1', record: 'ended', liveness: 'gone', notices: 2 } },
        'session S1 is filed nothing: the board recorded it ended, and it reads gone; 2 notices wait until it runs again',
      ],
      [
        'inbox.withheld',
        { sessionId: 'S1', reason: { code: 'not.running', session: 'S1', record: 'unknown', liveness: 'stopped', notices: 1 } },
        'session S1 is filed nothing: the board never saw it run, and it reads stopped; 1 notice waits until it runs again',
      ],
      // An older version's sentence is shown as it was written.
      ['inbox.waiting', { sessionId: 'S9', reason: 'the liveness of session S9 could not be read' }, 'the liveness of session S9 could not be read'],
    ],
    'inbox:S1',
  );

  it('a reason of an unknown code, or with a parameter missing, is refused before it is written, naming the field', () => {
    const event = (reason: unknown) => ({ stream: 'inbox:S1', at: 0, type: 'inbox.withheld', data: { sessionId: 'S1', reason } });
    expect(() => codec.checkNew(event({ code: 'no.such.code' }))).toThrow(/reason/);
    expect(() => codec.checkNew(event({ code: 'not.running', session: 'S1', record: 'ended', notices: 1 }))).toThrow(/reason/);
    expect(() => codec.checkNew(event({ code: 'not.running', session: 'S1', record: 'ended', liveness: 'gone', notices: 1 }))).not.toThrow();
  });
});
