/**
 * A run token is bound to the daemon life that claimed the run: two daemons joined as one computer (a
 * copied config) never hold each other's tokens, and the computer's own token (`HMAC(run, computer)`, what
 * every claim got before tokens were bound) speaks for no run claimed since (401, the token is not the
 * run's). A run claimed before the upgrade (its claim recorded without the binding) keeps that token, so
 * its holder completes it after the board is upgraded.
 */
import { describe, expect, it } from 'vitest';
import { boardInput } from '../../../actors/board/boardInputs.ts';
import { runToken } from '../../../adapters/http/tokens.ts';
import { liveBoard } from './liveBoard.ts';

const LIFE = { 'runledger-incarnation': 'life-a' };

describe('run tokens bound to the claiming life', () => {
  it('the token of a run claimed by one life is its own: the computer’s token and a twin’s claim get nothing of it', async () => {
    const board = await liveBoard(['c1']);
    const c1 = board.tokens.c1!;
    const runId = await board.submit('A');
    const claim = await board.call('POST', `/v1/computers/c1/runs/${runId}/claim`, { token: c1, body: {}, headers: LIFE });
    expect(claim.status).toBe(200);
    const own = claim.body.run_token as string;
    const computers = runToken('secret', runId, 'c1');
    expect(own).not.toBe(computers);
    // The same life asking again gets the same token; its twin, with or without an incarnation, is refused.
    expect((await board.call('POST', `/v1/computers/c1/runs/${runId}/claim`, { token: c1, body: {}, headers: LIFE })).body.run_token).toBe(own);
    for (const headers of [{ 'runledger-incarnation': 'life-b' }, {}] as Record<string, string>[]) {
      const twin = await board.call('POST', `/v1/computers/c1/runs/${runId}/claim`, { token: c1, body: {}, headers });
      expect(twin).toMatchObject({ status: 409, body: { detail: { error: 'claimed_elsewhere' } } });
    }
    expect((await board.call('POST', `/v1/runs/${runId}/heartbeat`, { token: computers, body: {} })).status).toBe(401);
    expect((await board.call('POST', `/v1/runs/${runId}/reply`, { token: computers, body: { text: 'a twin' } })).status).toBe(401);
    expect((await board.call('POST', `/v1/runs/${runId}/complete`, { token: computers, body: { ok: true } })).status).toBe(401);
    expect((await board.call('POST', `/v1/runs/${runId}/heartbeat`, { token: own, body: {} })).status).toBe(200);
    expect((await board.call('POST', `/v1/runs/${runId}/complete`, { token: own, body: { ok: true } })).status).toBe(200);
    // Settled, the run is read from its stream: its holder's token gets the 409 of a repeat, the computer's still nothing.
    expect((await board.call('POST', `/v1/runs/${runId}/complete`, { token: own, body: { ok: true } })).status).toBe(409);
    expect((await board.call('POST', `/v1/runs/${runId}/complete`, { token: computers, body: { ok: true } })).status).toBe(401);
  });

  it('a run claimed before tokens were bound (its claim recorded without the binding) is completed by its holder with the token it got', async () => {
    const board = await liveBoard(['c1']);
    const runId = await board.submit('A');
    // The claim as a board of the version before recorded it.
    const { bound: _, ...older } = boardInput.claim(runId, 'c1', Date.now(), 'life-a', 'live').data;
    const outcome = await board.server.board.actor.input({ ...boardInput.claim(runId, 'c1', Date.now()), data: older });
    expect(outcome.ok && outcome.decisions[0]?.type).toBe('board.run.claimed');
    const token = runToken('secret', runId, 'c1');
    expect((await board.call('POST', `/v1/runs/${runId}/heartbeat`, { token, body: {} })).status).toBe(200);
    expect((await board.call('POST', `/v1/runs/${runId}/complete`, { token, body: { ok: true } })).status).toBe(200);
    expect((await board.call('POST', `/v1/runs/${runId}/complete`, { token, body: { ok: true } })).status).toBe(409);
    expect((await board.call('GET', `/v1/runs/${runId}`)).body).toMatchObject({ state: 'succeeded', computer_id: 'c1' });
  });
});
