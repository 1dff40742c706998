/**
 * Bad input at every edge of the wire (docs/rules.md#tools and docs/rules.md#wire-and-cli), against real processes on loopback: the
 * board refuses each bad request with the right status, records it, and keeps serving; a computer
 * answers each bad frame 400, records it, and stays connected, except for a frame over the size
 * limit, which closes the connection (1009) and is followed by a reconnect.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { MAX_FRAME_BYTES } from '../../events/wire/frames.ts';
import { tempDir } from '../support/tempStore.ts';
import { addComputer, checkLogs, eventsOf, readLog, startBoard, startCli, submit, waitFor } from './support/cluster.ts';

interface Sent {
  readonly what: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
}

const UNAUTHORIZED = { detail: { error: 'unauthorized', message: 'a valid token is required' } };

/** The status a WebSocket upgrade got: 101 when it opened (then closed again at once). */
function upgradeStatus(url: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    ws.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('open', () => {
      resolve(101);
      ws.close();
    });
    ws.on('error', (error) => reject(error));
  });
}

describe('the board, fed bad input on loopback', () => {
  it('refuses each bad request with its status, records it, reveals nothing on a 401, and keeps serving', async () => {
    const dir = tempDir();
    const board = await startBoard(join(dir, 'board', 'board.db'));
    const [c1, c2] = await Promise.all([addComputer(board.db, 'c1'), addComputer(board.db, 'c2')]);
    const sent: Sent[] = [];
    const call = async (
      what: string,
      method: 'GET' | 'POST',
      path: string,
      options: { token?: string | null; body?: string; authorization?: string } = {},
    ) => {
      const authorization = options.authorization ?? (options.token ? `Bearer ${options.token}` : undefined);
      const response = await fetch(`${board.url}${path}`, {
        method,
        headers: { ...(authorization ? { authorization } : {}), ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(options.body !== undefined ? { body: options.body } : {}),
      });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Kept as text.
      }
      sent.push({ what, method, path, status: response.status, body });
      return { status: response.status, body };
    };
    const submitToken = board.token;
    const queued = await submit(board, 'a', 'left queued: never claimed');

    // Bodies.
    await call('malformed JSON', 'POST', '/v1/runs', { token: submitToken, body: '{"lane": "a", "prompt":' });
    await call('an unknown field', 'POST', '/v1/runs', { token: submitToken, body: JSON.stringify({ lane: 'a', prompt: 'p', colour: 'red' }) });
    await call('a missing field', 'POST', '/v1/runs', { token: submitToken, body: JSON.stringify({ lane: 'a' }) });
    await call('an oversized submit', 'POST', '/v1/runs', {
      token: submitToken,
      body: JSON.stringify({ lane: 'a', prompt: 'x'.repeat(5 * 1024 * 1024 + 1) }),
    });
    await call('an oversized cancel', 'POST', `/v1/runs/${queued}/cancel`, {
      token: submitToken,
      body: JSON.stringify({ pad: 'x'.repeat(70 * 1024) }),
    });
    // Tokens.
    await call('no token', 'POST', '/v1/runs', { body: JSON.stringify({ lane: 'a', prompt: 'p' }) });
    await call('a wrong token', 'POST', '/v1/runs', { token: 'not-the-token', body: JSON.stringify({ lane: 'a', prompt: 'p' }) });
    await call('another scheme', 'POST', '/v1/runs', { authorization: `Basic ${submitToken}`, body: JSON.stringify({ lane: 'a', prompt: 'p' }) });
    await call('a cancel with a computer token', 'POST', `/v1/runs/${queued}/cancel`, { token: c1, body: '{}' });
    await call('a claim without a token', 'POST', `/v1/computers/c1/runs/${queued}/claim`, { body: '{}' });
    await call('a claim with the submit token', 'POST', `/v1/computers/c1/runs/${queued}/claim`, { token: submitToken, body: '{}' });
    await call("a claim for another computer's id", 'POST', `/v1/computers/c2/runs/${queued}/claim`, { token: c1, body: '{}' });
    await call('a heartbeat with a computer token', 'POST', `/v1/runs/${queued}/heartbeat`, { token: c1, body: '{}' });
    await call('a heartbeat of an unknown run', 'POST', '/v1/runs/no-such-run/heartbeat', { token: c1, body: '{}' });
    await call('a completion with the submit token', 'POST', `/v1/runs/${queued}/complete`, { token: submitToken, body: '{"ok":true}' });
    // Ids.
    await call('a path-escaping run id', 'GET', '/v1/runs/..%2Fx');
    await call('a malformed escape', 'GET', '/v1/runs/%ZZ');
    await call('a run id too long', 'GET', `/v1/runs/${'a'.repeat(65)}`);
    await call('a dotted run id', 'POST', '/v1/runs/a.b/cancel', { token: submitToken, body: '{}' });
    await call('a path-escaping computer id', 'POST', `/v1/computers/c1%2F..%2Fc2/runs/${queued}/claim`, { token: c1, body: '{}' });
    await call('a path-escaping run id in a claim', 'POST', '/v1/computers/c1/runs/..%2F..%2Fetc/claim', { token: c1, body: '{}' });

    const expected: Record<string, number> = {
      'malformed JSON': 400,
      'an unknown field': 422,
      'a missing field': 422,
      'an oversized submit': 413,
      'an oversized cancel': 413,
      'no token': 401,
      'a wrong token': 401,
      'another scheme': 401,
      'a cancel with a computer token': 401,
      'a claim without a token': 401,
      'a claim with the submit token': 401,
      "a claim for another computer's id": 401,
      'a heartbeat with a computer token': 401,
      'a heartbeat of an unknown run': 401,
      'a completion with the submit token': 401,
      'a path-escaping run id': 400,
      'a malformed escape': 400,
      'a run id too long': 400,
      'a dotted run id': 400,
      'a path-escaping computer id': 400,
      'a path-escaping run id in a claim': 400,
    };
    expect(Object.fromEntries(sent.map((s) => [s.what, s.status]))).toEqual(expected);
    // A 401 says only that: whether the run exists, whose it is, or which token was wrong, it does not tell.
    for (const s of sent.filter((s) => s.status === 401)) expect(s.body, s.what).toEqual(UNAUTHORIZED);

    // A run completed twice: the second is refused 409 by the board's decider.
    const run = await submit(board, 'b', 'claimed by hand');
    const claim = await call('a claim', 'POST', `/v1/computers/c1/runs/${run}/claim`, { token: c1, body: '{}' });
    expect(claim.status).toBe(200);
    const runToken = (claim.body as { run_token: string }).run_token;
    expect(await call('a claim by the other computer', 'POST', `/v1/computers/c2/runs/${run}/claim`, { token: c2, body: '{}' })).toMatchObject({
      status: 409,
      body: { detail: { error: 'claimed_elsewhere' } },
    });
    expect(await call('a heartbeat', 'POST', `/v1/runs/${run}/heartbeat`, { token: runToken, body: '{}' })).toEqual({
      status: 200,
      body: { cancel_requested: false },
    });
    expect(await call("another run's token", 'POST', `/v1/runs/${queued}/complete`, { token: runToken, body: '{"ok":true}' })).toEqual({
      status: 401,
      body: UNAUTHORIZED,
    });
    expect((await call('a completion', 'POST', `/v1/runs/${run}/complete`, { token: runToken, body: '{"ok":true}' })).status).toBe(200);
    expect(await call('the completion again', 'POST', `/v1/runs/${run}/complete`, { token: runToken, body: '{"ok":true}' })).toMatchObject({
      status: 409,
      body: { detail: { error: 'already_terminal' } },
    });
    expect((await call('a cancel of a finished run', 'POST', `/v1/runs/${run}/cancel`, { token: submitToken, body: '{}' })).status).toBe(409);

    // The push stream's door: a token, the computer's own, and an id that names no folder.
    const stream = (id: string) => `${board.url.replace('http', 'ws')}/v1/computers/${id}/stream`;
    expect(await upgradeStatus(stream('c1'))).toBe(401);
    expect(await upgradeStatus(stream('c1'), c2)).toBe(401);
    expect(await upgradeStatus(stream('c1.x'), c1)).toBe(400);
    expect(await upgradeStatus(stream('%ZZ'), c1)).toBe(400);

    // A computer's own connection: acks that are not JSON are dropped, one over the ack limit closes it (1009).
    const ws = new WebSocket(stream('c1'), { headers: { authorization: `Bearer ${c1}` } });
    const frames: unknown[] = [];
    ws.on('message', (data) => frames.push(JSON.parse(data.toString())));
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    // On connect the board re-offers the run still queued.
    await waitFor('the queued run pushed on connect', () => frames.some((f) => (f as { data?: { run_id?: string } }).data?.run_id === queued), 5_000);
    ws.send('not an ack');
    ws.send(JSON.stringify({ ack: 'no-such-frame', status: 202 }));
    ws.send('x'.repeat(64 * 1024));
    expect(await closed).toBe(1009);

    // Still serving: a normal submit is taken, and every refusal is in the log.
    const after = await submit(board, 'c', 'after the bad input');
    expect((await fetch(`${board.url}/v1/runs/${after}`)).status).toBe(200);
    const rejections = sent.filter((s) => s.status >= 400 && ![409].includes(s.status));
    // Refusals of callers that proved a token are recorded one by one; the others are counted in one
    // summary a minute, recorded at the latest when the board stops (docs/rules.md#the-log).
    const trusted = new Set([
      'malformed JSON',
      'an unknown field',
      'a missing field',
      'an oversized submit',
      'an oversized cancel',
      'a dotted run id',
      'a path-escaping run id in a claim',
    ]);
    const log = await waitFor(
      'the trusted refusals recorded',
      () => {
        const log = readLog(board.db);
        return eventsOf(log, 'board.request.rejected').length >= trusted.size ? log : null;
      },
      5_000,
    );
    const recorded = eventsOf(log, 'board.request.rejected').map((e) => `${e.data.status} ${e.data.path}`);
    for (const s of rejections.filter((s) => trusted.has(s.what))) expect(recorded, s.what).toContain(`${s.status} ${s.path}`);
    expect(recorded).toHaveLength(trusted.size);
    const refused = eventsOf(log, 'board.request.refused', run).map((e) => `${e.data.request} ${e.data.status} ${e.data.code}`);
    // The other computer's claim lost: answered 409 above, and not recorded (it changes nothing, docs/rules.md#dispatch).
    expect(refused).toEqual(['complete 409 already_terminal', 'cancel 409 already_terminal']);
    // No secret reached the log.
    const text = JSON.stringify(log);
    for (const secret of [submitToken, c1, c2, runToken]) expect(text).not.toContain(secret);

    await board.process.stop();
    const summaries = eventsOf(readLog(board.db), 'board.requests.refused');
    expect(summaries).toHaveLength(1);
    // Every anonymous refusal, the four push stream doors' included.
    expect(summaries[0]!.data).toMatchObject({ count: rejections.length - trusted.size + 4 });
    await checkLogs([board.db]);
  });
});

/** A stand-in board: an HTTP server that knows no run, and a push stream the test writes frames to. */
async function fakeBoard(): Promise<{ url: string; connections: FakeConnection[]; server: Server }> {
  const server = createServer((_request, response) => {
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ detail: { error: 'unknown_run' } }));
  });
  const wss = new WebSocketServer({ server, path: '/v1/computers/c1/stream' });
  const connections: FakeConnection[] = [];
  wss.on('connection', (ws, request) => connections.push(new FakeConnection(ws, request.headers.authorization ?? null)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    for (const ws of wss.clients) ws.terminate();
    wss.close();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections, server };
}

class FakeConnection {
  readonly acks: { ack: string | null; status: number; reason?: string }[] = [];
  closeCode: number | null = null;

  constructor(
    readonly ws: WebSocket,
    readonly authorization: string | null,
  ) {
    ws.on('message', (data) => this.acks.push(JSON.parse(data.toString())));
    ws.on('close', (code) => (this.closeCode = code));
    ws.on('error', () => {});
  }

  ackOf(id: string | null) {
    return waitFor(`the ack of frame ${id}`, () => this.acks.find((a) => a.ack === id), 5_000, 20);
  }
}

describe('a computer, fed bad frames by its board', () => {
  it('answers each bad frame 400 and records it, stays connected, and reconnects after an oversized frame closed the stream (1009)', async () => {
    const dir = tempDir();
    const board = await fakeBoard();
    const db = join(dir, 'computer', 'c1.db');
    const daemon = startCli([
      'daemon',
      '--server',
      board.url,
      '--computer',
      'c1',
      '--token',
      't',
      '--db',
      db,
      '--heartbeat-s',
      '1',
      '--exec',
      'true',
    ]);
    await daemon.waitForOutput(/push stream connected/);
    const first = await waitFor('the computer to connect', () => board.connections[0]);
    expect(first.authorization).toBe('Bearer t');

    first.ws.send('this is not JSON');
    expect(await first.ackOf(null)).toMatchObject({ status: 400, reason: 'the frame is not JSON' });
    first.ws.send(JSON.stringify({ id: 'wrong-shape', kind: 'run.requested' }));
    expect(await first.ackOf('wrong-shape')).toMatchObject({ status: 400, reason: expect.stringContaining('wrong shape') });
    first.ws.send(JSON.stringify({ id: 'escape', kind: 'run.requested', data: { run_id: '../x', lane: 'a' } }));
    expect(await first.ackOf('escape')).toMatchObject({ status: 400, reason: expect.stringContaining('run_id') });
    first.ws.send(JSON.stringify({ id: 'lane-escape', kind: 'run.requested', data: { run_id: 'r-2', lane: '../../etc' } }));
    expect(await first.ackOf('lane-escape')).toMatchObject({ status: 400, reason: expect.stringContaining('lane') });
    // Still connected and still taking frames: a good one is accepted (its claim then finds no run here).
    first.ws.send(JSON.stringify({ id: 'good', kind: 'run.requested', data: { run_id: 'r-1', lane: 'a', computer_id: 'c1' } }));
    expect(await first.ackOf('good')).toMatchObject({ status: 202 });
    expect(board.connections).toHaveLength(1);
    expect(first.closeCode).toBeNull();

    // Over the limit: the computer closes the stream with 1009 and comes back.
    first.ws.send(JSON.stringify({ id: 'huge', kind: 'run.requested', data: { run_id: 'r-3', lane: 'a', pad: 'x'.repeat(MAX_FRAME_BYTES) } }));
    await waitFor('the oversized frame to close the stream', () => first.closeCode !== null, 5_000, 20);
    expect(first.closeCode).toBe(1009);
    const second = await waitFor('the computer to reconnect', () => board.connections[1], 10_000);
    second.ws.send('{');
    expect(await second.ackOf(null)).toMatchObject({ status: 400 });
    expect(daemon.alive).toBe(true);

    const refused = eventsOf(readLog(db), 'frame.refused');
    expect(refused.map((e) => e.data.frameId)).toEqual([null, 'wrong-shape', 'escape', 'lane-escape', null]);
    expect(refused.every((e) => e.stream === 'c1/computer:c1')).toBe(true);
    // The good frame was taken in, and its run never started: the board (this stand-in) knows no such run.
    await waitFor('the claim of r-1 to be answered', () => eventsOf(readLog(db), 'claim.answered', 'r-1').length === 1, 5_000);

    expect((await daemon.stop()).code).toBe(0);
    await checkLogs([db]);
  });
});
