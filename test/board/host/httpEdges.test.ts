import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { REFUSAL_WINDOW_MS } from '../../../adapters/http/refusalCounter.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';
import { liveBoard, ofType, openStream, SUBMIT, until } from './liveBoard.ts';

/** The board's HTTP edge (docs/rules.md#the-log, docs/rules.md#computer-behaviour and docs/rules.md#wire-and-cli) against a real server on 127.0.0.1. */
describe("the board API: claims carry the computer's incarnation", () => {
  it('a claim of a run held by another incarnation of the same computer is 409 claimed_elsewhere; the same incarnation gets 200 and the same run token', async () => {
    const board = await liveBoard(['c1']);
    const runId = await board.submit('A');
    const claim = (incarnation?: string) =>
      board.call('POST', `/v1/computers/c1/runs/${runId}/claim`, {
        token: board.tokens.c1,
        body: {},
        ...(incarnation ? { headers: { 'Runledger-Incarnation': incarnation } } : {}),
      });
    const first = await claim('life-a');
    expect(first.status).toBe(200);
    const twin = await claim('life-b');
    expect(twin).toMatchObject({ status: 409, body: { detail: { error: 'claimed_elsewhere' } } });
    const again = await claim('life-a');
    expect(again.status).toBe(200);
    expect(again.body.run_token).toBe(first.body.run_token);
    // A claim that names none (an older computer) is a life of its own: never granted another life's run.
    expect(await claim()).toMatchObject({ status: 409, body: { detail: { error: 'claimed_elsewhere' } } });
    const requested = ofType(await board.log(), 'board.claim.requested').map((e) => (e.data as { incarnation?: string }).incarnation);
    expect(requested).toEqual(['life-a', 'life-b', 'life-a', undefined]);
  });

  it('a claim with a malformed incarnation is 400 invalid_incarnation, and nothing is claimed', async () => {
    const board = await liveBoard(['c1']);
    const runId = await board.submit('A');
    for (const bad of ['', 'x'.repeat(65), 'a/b', 'life a']) {
      const answer = await board.call('POST', `/v1/computers/c1/runs/${runId}/claim`, {
        token: board.tokens.c1,
        body: {},
        headers: { 'Runledger-Incarnation': bad },
      });
      expect(answer, JSON.stringify(bad)).toMatchObject({ status: 400, body: { detail: { error: 'invalid_incarnation' } } });
    }
    expect(ofType(await board.log(), 'board.claim.requested')).toHaveLength(0);
  });
});

describe('the board API: submissions', () => {
  it('timeout_s is an integer 0..2,592,000: anything else is 422 invalid_body naming timeout_s', async () => {
    const board = await liveBoard();
    for (const timeout_s of [1e308, 2147484.5, -1, 2_592_001, '60', 1.5]) {
      const answer = await board.call('POST', '/v1/runs', { token: SUBMIT, body: { lane: 'A', prompt: 'p', timeout_s } });
      expect(answer.status, String(timeout_s)).toBe(422);
      expect(answer.body.detail.error).toBe('invalid_body');
      expect(answer.body.detail.message).toMatch(/^timeout_s: /);
    }
    // The typed-out JSON 1e308, not a JS number that JSON.stringify could have changed.
    const raw = await board.call('POST', '/v1/runs', { token: SUBMIT, body: '{"lane":"A","prompt":"p","timeout_s":1e308}' });
    expect(raw.status).toBe(422);
    for (const timeout_s of [0, 2_592_000, 60, null]) {
      expect((await board.call('POST', '/v1/runs', { token: SUBMIT, body: { lane: 'A', prompt: 'p', timeout_s } })).status, String(timeout_s)).toBe(
        201,
      );
    }
  });

  it('an Idempotency-Key reused with a different body is 422 idempotency_key_reused; the same body answers the first run again', async () => {
    const board = await liveBoard();
    const post = (body: unknown) => board.call('POST', '/v1/runs', { token: SUBMIT, body, headers: { 'Idempotency-Key': 'k-1' } });
    const first = await post({ lane: 'A', prompt: 'p', timeout_s: 60 });
    expect(first.status).toBe(201);
    expect(await post({ lane: 'A', prompt: 'p', timeout_s: 60 })).toEqual({ status: 201, body: { run_id: first.body.run_id } });
    const other = await post({ lane: 'A', prompt: 'another prompt', timeout_s: 60 });
    expect(other).toMatchObject({ status: 422, body: { detail: { error: 'idempotency_key_reused' } } });
    expect(other.body.detail.message).toContain('prompt differs');
    expect((await post({ lane: 'A', prompt: 'p' })).status).toBe(422);
  });

  it('a 20 MB body from a client that writes before it reads is answered 413 body_too_large at once, and the connection is closed', async () => {
    const board = await liveBoard();
    const url = new URL(board.url);
    const socket = connect(Number(url.port), url.hostname);
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    const body = Buffer.alloc(20 * 1024 * 1024, 'x');
    socket.write(
      `POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${SUBMIT}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    // It reads nothing until its whole body is written.
    socket.pause();
    const written = await new Promise<string>((resolve) => {
      socket.write(body, (error) => resolve(error ? error.message : 'written'));
      setTimeout(() => resolve('not written within 5 s'), 5_000).unref();
    });
    expect(written).toBe('written');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.resume();
    const closed = await new Promise<boolean>((resolve) => {
      socket.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 5_000).unref();
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"error":"body_too_large"');
    expect(closed).toBe(true);
  });
});

describe('the board API: DNS rebinding', () => {
  it('listening on loopback, a request whose Host is not a loopback name is refused 403 host_not_allowed; loopback names with any port are served', async () => {
    const board = await liveBoard(['c1']);
    for (const host of ['evil.example', 'evil.example:7420', '10.0.0.1', '127.0.0.1.evil.example']) {
      const answer = await board.rawStatus('GET', '/healthz', host);
      expect(answer.status, host).toBe(403);
      expect(JSON.parse(answer.body)).toMatchObject({ detail: { error: 'host_not_allowed' } });
    }
    for (const host of ['127.0.0.1', '127.0.0.1:7420', 'localhost:1', '[::1]:7420', 'LOCALHOST']) {
      expect((await board.rawStatus('GET', '/healthz', host)).status, host).toBe(200);
    }
    const rebound = openStream(board, 'c1', undefined, { host: 'evil.example' });
    await expect(rebound.opened).rejects.toThrow('upgrade answered 403');
  });
});

describe('the board API: anonymous refusals are counted, not recorded one by one (docs/rules.md#the-log)', () => {
  it('500 wrong-token requests within a minute add one summary event, with their count and reasons', async () => {
    const board = await liveBoard(['c1']);
    const before = (await board.log()).length;
    for (let i = 0; i < 50; i++) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          j % 2 === 0
            ? board.call('POST', '/v1/runs', { token: 'wrong', body: { lane: 'A', prompt: 'p' } })
            : board.call('POST', '/v1/computers/c1/runs/r1/claim', { body: {} }),
        ),
      );
    }
    expect((await board.log()).length - before).toBeLessThanOrEqual(1);
    await board.close();
    const log = await board.log();
    expect(log.length - before).toBeLessThanOrEqual(2);
    const [summary, ...more] = ofType(log, 'board.requests.refused');
    expect(more).toEqual([]);
    expect(summary!.data).toMatchObject({ count: 500, reasons: { unauthorized: 500 } });
    const { first_at, last_at } = summary!.data as { first_at: number; last_at: number };
    expect(last_at).toBeGreaterThanOrEqual(first_at);
    expect(ofType(log, 'board.request.rejected')).toEqual([]);
  });

  it('a window that ends records its summary, and the next refusal starts another', async () => {
    const clock = new FakeClock();
    const board = await liveBoard([], { clock });
    await board.call('GET', '/nope');
    await board.call('POST', '/v1/runs', { body: {} });
    expect(ofType(await board.log(), 'board.requests.refused')).toEqual([]);
    clock.advance(REFUSAL_WINDOW_MS);
    const first = await until(async () => {
      const found = ofType(await board.log(), 'board.requests.refused');
      return found.length > 0 && found;
    }, "the summary at the window's end");
    expect(first[0]!.data).toMatchObject({ count: 2, reasons: { not_found: 1, unauthorized: 1 } });
    await board.call('POST', '/v1/runs', { body: {} });
    await board.close();
    expect(ofType(await board.log(), 'board.requests.refused').map((e) => (e.data as { count: number }).count)).toEqual([2, 1]);
  });

  it("an authenticated caller's bad request is still recorded on its own, with its reason", async () => {
    const board = await liveBoard();
    await board.call('POST', '/v1/runs', { token: SUBMIT, body: '{"lane":' });
    const rejected = ofType(await board.log(), 'board.request.rejected');
    expect(rejected.map((e) => e.data)).toMatchObject([{ status: 400, code: 'malformed_json' }]);
  });
});
