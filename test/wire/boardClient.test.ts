import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { type BoardAnswer, BoardClient } from '../../adapters/http/boardClient.ts';

/** One request as the board received it. */
interface Received {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly body: unknown;
}

type Answer = (request: IncomingMessage, response: ServerResponse, received: Received) => void;

/**
 * A real HTTP server on 127.0.0.1 (an ephemeral port) standing in for the board: it records every
 * request and every TCP connection, and answers as `answer` says (200 `{}` by default).
 */
async function startBoard(answer: Answer = (_request, response) => json(response, 200, {})) {
  const received: Received[] = [];
  const open = new Set<Socket>();
  let connections = 0;
  const server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      const seen: Received = {
        method: request.method,
        url: request.url,
        authorization: request.headers.authorization,
        contentType: request.headers['content-type'],
        body: text ? JSON.parse(text) : undefined,
      };
      received.push(seen);
      answer(request, response, seen);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received, open, connections: () => connections };
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** The client under test, closed when the test ends whatever happens. */
function clientOf(url: string, timeoutMs?: number): BoardClient {
  const client = new BoardClient(url, 'mac-1', 'computer-secret', timeoutMs);
  onTestFinished(() => client.close());
  return client;
}

/** A call's answer, or a failure if it never comes: a client that hangs must fail the test, not stall it. */
async function within(ms: number, call: Promise<BoardAnswer>): Promise<BoardAnswer> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  try {
    return await Promise.race([call, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("the board client: the computer's four calls over HTTP (docs/rules.md#wire-and-cli)", () => {
  it('given a board, when each of the four calls is made, then it posts JSON to its documented path (docs/http-api.md) with the right bearer token, and hands back the status and the parsed body', async () => {
    const board = await startBoard((request, response) => {
      if (request.url?.endsWith('/claim')) return json(response, 201, { run: { run_id: 'r/1' }, run_token: 'run-secret', skills: [] });
      if (request.url?.endsWith('/heartbeat')) return json(response, 200, { cancel_requested: true });
      if (request.url?.endsWith('/complete')) return json(response, 409, { detail: { error: 'terminal' } });
      return json(response, 200, {});
    });
    const client = clientOf(board.url);

    // A run id that needs escaping, and a reply with multi-byte characters (content-length counts bytes).
    const answers = [
      await client.claim('r/1'),
      await client.heartbeat('r/1', 'run-secret'),
      await client.heartbeat('r/1', 'run-secret', 'half way'),
      await client.reply('r/1', 'run-secret', 'déjà vu — ✓'),
      await client.complete('r/1', 'run-secret', { ok: false, error: 'cancelled_by_user' }),
    ];

    expect(board.received).toEqual([
      {
        method: 'POST',
        url: '/v1/computers/mac-1/runs/r%2F1/claim',
        authorization: 'Bearer computer-secret',
        contentType: 'application/json',
        body: {},
      },
      { method: 'POST', url: '/v1/runs/r%2F1/heartbeat', authorization: 'Bearer run-secret', contentType: 'application/json', body: {} },
      {
        method: 'POST',
        url: '/v1/runs/r%2F1/heartbeat',
        authorization: 'Bearer run-secret',
        contentType: 'application/json',
        body: { progress: 'half way' },
      },
      {
        method: 'POST',
        url: '/v1/runs/r%2F1/reply',
        authorization: 'Bearer run-secret',
        contentType: 'application/json',
        body: { text: 'déjà vu — ✓' },
      },
      {
        method: 'POST',
        url: '/v1/runs/r%2F1/complete',
        authorization: 'Bearer run-secret',
        contentType: 'application/json',
        body: { ok: false, error: 'cancelled_by_user' },
      },
    ]);
    expect(answers).toEqual([
      { status: 201, body: { run: { run_id: 'r/1' }, run_token: 'run-secret', skills: [] } },
      { status: 200, body: { cancel_requested: true } },
      { status: 200, body: { cancel_requested: true } },
      { status: 200, body: {} },
      // A refusal is an answer like any other: the deciders classify it, the client does not throw.
      { status: 409, body: { detail: { error: 'terminal' } } },
    ]);
  });

  it('given an answer whose body is not JSON, or is empty, then the status comes back with no body', async () => {
    const board = await startBoard((request, response) => {
      if (request.url?.endsWith('/claim')) return void response.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
      response.writeHead(204).end();
    });
    const client = clientOf(board.url);

    expect(await client.claim('r1')).toEqual({ status: 502, body: undefined });
    expect(await client.heartbeat('r1', 't')).toEqual({ status: 204, body: undefined });
  });

  it('given nothing listening on the port, then the call answers status 0: a network error, not a throw', async () => {
    // A port that was free a moment ago: the connection is refused.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const client = clientOf(`http://127.0.0.1:${freePort}`);

    expect(await within(5_000, client.claim('r1'))).toEqual({ status: 0 });
    expect(await within(5_000, client.complete('r1', 't', { ok: true }))).toEqual({ status: 0 });
  });

  it("given a board that never answers, then the call answers status 0 once the client's timeout is over, and not long after", async () => {
    const board = await startBoard(() => {
      // Takes the request and never answers it.
    });
    const client = clientOf(board.url, 200);

    const started = Date.now();
    expect(await within(5_000, client.heartbeat('r1', 't'))).toEqual({ status: 0 });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(2_000);
    expect(board.received).toHaveLength(1);
  });

  it("given a board that trickles its answer and never finishes it, then the call still answers status 0 once the client's timeout is over", async () => {
    // The timeout bounds the whole call, as fetch's AbortSignal.timeout did: a socket that is never idle
    // for the timeout (a stuck proxy sending keep-alive bytes) must not hold a claim in flight for ever.
    const trickles: NodeJS.Timeout[] = [];
    onTestFinished(() => trickles.forEach(clearInterval));
    const board = await startBoard((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      trickles.push(setInterval(() => response.write(' '), 50));
    });
    const client = clientOf(board.url, 200);

    const started = Date.now();
    expect(await within(3_000, client.heartbeat('r1', 't'))).toEqual({ status: 0 });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('given a board that cuts the connection half way through its answer, then the call answers status 0', async () => {
    const board = await startBoard((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"cancel_req');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const client = clientOf(board.url);

    expect(await within(5_000, client.heartbeat('r1', 't'))).toEqual({ status: 0 });
  });

  it('given several calls, then they share one kept-alive TCP connection, and after close() no connection stays open', async () => {
    const board = await startBoard();
    const client = clientOf(board.url);

    for (let i = 0; i < 5; i++) expect((await client.heartbeat(`r${i}`, 't')).status).toBe(200);
    await client.claim('r9');

    expect(board.received).toHaveLength(6);
    expect(board.connections()).toBe(1);
    // Kept alive between calls: the connection is still there, idle, until the client is closed.
    expect(board.open.size).toBe(1);

    client.close();
    await vi.waitFor(() => expect(board.open.size).toBe(0), { timeout: 2_000, interval: 10 });
  });
});
