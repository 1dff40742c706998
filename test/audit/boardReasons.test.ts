import { describe, expect, it } from 'vitest';
import { requestAnswer } from '../../actors/board/boardAnswers.ts';
import { type BoardReason, wordBoardReason } from '../../events/boardReasons.ts';
import { codec, type DomainEvent } from '../../events/catalog.ts';
import { describeEvent } from '../../projections/audit/describeEvent.ts';

function stored(type: string, data: unknown): DomainEvent {
  return { seq: 1, stream: 'run:r1', version: 1, type, data, at: 0, cause: null, actor: 'test:1' } as DomainEvent;
}

describe('the board records reasons as codes, and the audit words them', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['board.run.claimed', { runId: 'r1', computerId: 'c1', reason: { code: 'claimed', computer: 'c1' } }, 'claimed by c1'],
    ['board.run.running', { runId: 'r1', computerId: 'c1', reason: { code: 'first.heartbeat' } }, 'running on c1: its first heartbeat came'],
    [
      'board.run.offered',
      {
        runId: 'r1',
        lane: 'A',
        agentId: null,
        computers: ['c2'],
        reason: { code: 'offered', on: { on: 'declined', computer: 'c1', why: 'refused' }, to: { to: 'last.turn', computer: 'c2', lane: 'A' } },
      },
      're-offered: c1 refused it; to c2, which ran the last turn of lane A (offered to c2)',
    ],
    [
      'board.run.queued',
      {
        runId: 'r1',
        lane: 'A',
        prompt: 'p',
        agentId: null,
        timeoutS: null,
        submittedOrder: 3,
        waits: { code: 'waits', to: { to: 'nobody', tried: false } },
      },
      'queued on the board in lane A (submission 3): offered to nobody yet: no connected computer takes work',
    ],
    [
      'board.run.finished',
      { runId: 'r1', computerId: 'c1', state: 'failed', error: 'boom\nat line 2', reason: { code: 'completed', state: 'failed', error: 'boom' } },
      'completed: failed (boom)',
    ],
    [
      'board.request.refused',
      {
        request: 'claim',
        runId: 'r2',
        computerId: 'c2',
        status: 409,
        code: 'conversation_busy',
        reason: { code: 'conversation_busy', lane: 'A', open: 'r1', state: 'running', holder: 'c1', earlier: true },
      },
      'the claim request was refused 409 conversation_busy: an earlier turn of lane A (run r1) is running by c1',
    ],
    [
      'board.computer.online',
      { computerId: 'c1', reason: { code: 'connected', pushed: 2 } },
      'connected to the push stream: pushed 2 unclaimed runs',
    ],
    // An older version's sentence is shown as it was written.
    ['board.computer.online', { computerId: 'c1', reason: 'connected to the push stream' }, 'connected to the push stream'],
  ])('%s %j → %s', (type, data, sentence) => {
    expect(codec.decodeData(1, type, data)).toEqual(data);
    expect(describeEvent(stored(type, data))).toBe(sentence);
  });

  it('a refusal recorded as a code is answered over HTTP in words', () => {
    const reason: BoardReason = { code: 'not_holder', run: 'r1', computer: 'c2', holder: null };
    const answer = requestAnswer([
      { type: 'board.request.refused', data: { request: 'complete', runId: 'r1', computerId: 'c2', status: 409, code: 'not_holder', reason } },
    ]);
    expect(answer).toEqual({ status: 409, code: 'not_holder', reason: 'c2 does not hold run r1: nobody holds its claim' });
    expect(wordBoardReason(reason)).toBe(answer && 'reason' in answer ? answer.reason : null);
  });

  it('a reason of an unknown code, or with a parameter missing, is refused before it is written, naming the field', () => {
    const event = (reason: unknown) => ({ stream: 'run:r1', at: 0, type: 'board.run.running', data: { runId: 'r1', computerId: 'c1', reason } });
    expect(() => codec.checkNew(event({ code: 'no.such.code' }))).toThrow(/reason/);
    expect(() => codec.checkNew(event({ code: 'claimed' }))).toThrow(/reason/);
    expect(() => codec.checkNew(event({ code: 'claimed', computer: 'c1' }))).not.toThrow();
  });
});
