import { describe, expect, it, onTestFinished } from 'vitest';
import { startBoardServer } from '../../../apps/board/boardServer.ts';
import { systemClock } from '../../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../../runtime/actors/runtime.ts';
import { type LiveBoard, liveBoard, ofType, SUBMIT } from './liveBoard.ts';

/**
 * Settled runs leave the board's state (issue 16); every answer about one is the same as while the
 * state held it (docs/rules.md#wire-and-cli), read from its stream, and the same again from a board started afresh on the log.
 */
describe('the board API: a settled run, answered from its stream', () => {
  /** A run claimed by c1, replied to, completed with usage; and a run cancelled before its claim. */
  async function settledRuns(board: LiveBoard) {
    const done = await board.submit('A', 'first turn');
    const claim = await board.call('POST', `/v1/computers/c1/runs/${done}/claim`, { token: board.tokens.c1, body: {} });
    const token = claim.body.run_token as string;
    expect((await board.call('POST', `/v1/runs/${done}/reply`, { token, body: { text: 'the answer' } })).status).toBe(200);
    const usage = { cost_usd: 0.5, input_tokens: 10 };
    expect((await board.call('POST', `/v1/runs/${done}/complete`, { token, body: { ok: true, usage } })).status).toBe(200);
    const withdrawn = await board.submit('B', 'never claimed');
    const cancel = await board.call('POST', `/v1/runs/${withdrawn}/cancel`, { token: SUBMIT });
    expect(cancel).toMatchObject({ status: 202, body: { run_id: withdrawn, state: 'cancelled', detail: 'withdrawn before it was claimed' } });
    return { done, withdrawn, token, usage };
  }

  async function expectSettledAnswers(call: LiveBoard['call'], c1: string, runs: Awaited<ReturnType<typeof settledRuns>>) {
    const { done, withdrawn, token, usage } = runs;
    expect((await call('GET', `/v1/runs/${done}`)).body).toEqual({
      run_id: done,
      lane: 'A',
      state: 'succeeded',
      computer_id: 'c1',
      reply: 'the answer',
      usage,
    });
    expect((await call('GET', `/v1/runs/${withdrawn}`)).body).toEqual({
      run_id: withdrawn,
      lane: 'B',
      state: 'cancelled',
      error: 'cancelled_by_user',
    });
    // A completion or a reply sent again, a heartbeat, a claim, a cancel of a finished run: as docs/rules.md#wire-and-cli says.
    expect((await call('POST', `/v1/runs/${done}/complete`, { token, body: { ok: false, error: 'again' } })).status).toBe(409);
    expect((await call('POST', `/v1/runs/${done}/reply`, { token, body: { text: 'late' } })).status).toBe(409);
    expect(await call('POST', `/v1/runs/${done}/heartbeat`, { token, body: {} })).toMatchObject({
      status: 410,
      body: { detail: { error: 'resolved' } },
    });
    expect((await call('POST', `/v1/computers/c1/runs/${done}/claim`, { token: c1, body: {} })).status).toBe(410);
    expect((await call('POST', `/v1/computers/c1/runs/${withdrawn}/claim`, { token: c1, body: {} })).status).toBe(410);
    expect((await call('POST', `/v1/runs/${done}/cancel`, { token: SUBMIT })).status).toBe(409);
    expect((await call('GET', `/v1/runs?prefix=${done.slice(0, 8)}`)).body.run_ids).toContain(done);
    expect((await call('GET', '/v1/runs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  }

  it('answers a finished run and a withdrawn one as docs/rules.md#wire-and-cli says, and so does a board started again on the log', async () => {
    const board = await liveBoard(['c1']);
    const runs = await settledRuns(board);
    await expectSettledAnswers(board.call, board.tokens.c1!, runs);
    // The requests recorded what the host read of the run: its end, for replay to decide them alike.
    // (A late claim, 410 gone, changes nothing and is answered without being recorded: docs/rules.md#dispatch.)
    const claims = ofType(await board.log(), 'board.claim.requested').map((e) => (e.data as { past?: unknown }).past);
    expect(claims).toEqual(['live']);
    const completions = ofType(await board.log(), 'board.completion.received').map((e) => (e.data as { past?: unknown }).past);
    expect(completions).toEqual(['live', { state: 'succeeded', computerId: 'c1' }]);

    await board.close();
    const system = startActorSystem({ onError: () => {} });
    const again = await startBoardServer({
      system,
      store: board.store,
      clock: systemClock,
      host: '127.0.0.1',
      port: 0,
      boardSecret: 'secret',
      submitToken: SUBMIT,
    });
    onTestFinished(async () => {
      await again.close();
      stopSystem(system);
    });
    const call: LiveBoard['call'] = async (method, path, init = {}) => {
      const response = await fetch(`${again.url}${path}`, {
        method,
        headers: {
          ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
          ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    };
    await expectSettledAnswers(call, board.tokens.c1!, runs);
  });
});
