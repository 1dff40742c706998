/**
 * The CLI's calls to a board (cli/shared/boardCall.ts) against a stand-in board on 127.0.0.1: what
 * goes on the wire, what comes back, and what a user is told when the board cannot be reached, cuts
 * its answer or sends the call elsewhere. Then through the real entry point: a board on https: (its
 * certificate from a CA the user names, NODE_EXTRA_CA_CERTS), and a process that exits as soon as it
 * has its answer, however long the board would keep the connection.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { boardCall } from '../../cli/shared/boardCall.ts';
import { runCli } from '../e2e/support/cluster.ts';
import { repoRoot } from '../support/processes.ts';

/** One request as the stand-in received it. */
interface Received {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

type Answer = (response: ServerResponse, received: Received) => void;

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (response) =>
    void response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/** Listens on 127.0.0.1 (a port the system picks), keeps every request, and is closed when the test ends. */
async function listen<S extends Server>(server: S, received: Received[], answer: Answer): Promise<{ port: number; received: Received[] }> {
  server.on('request', async (request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    const seen = { method: request.method, url: request.url, headers: request.headers, body };
    received.push(seen);
    answer(response, seen);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    (server as unknown as { closeAllConnections(): void }).closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as AddressInfo).port, received };
}

async function standIn(answer: Answer = json(200, {})) {
  const { port, received } = await listen(createServer(), [], answer);
  return { url: `http://127.0.0.1:${port}`, received };
}

/** A board address where nothing listens: a port that was free a moment ago. */
async function nothingAt(): Promise<string> {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise((resolve) => closed.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe("the CLI's calls to a board", () => {
  it('given a POST, then it sends its JSON body with the token, its content type and the headers asked for, and hands back the parsed answer', async () => {
    const board = await standIn(json(201, { run_id: 'r-1' }));

    const answer = await boardCall(
      { server: board.url, token: 't0k', db: 'unused.db' },
      'POST',
      '/v1/runs',
      { lane: 'alice', prompt: 'déjà vu' },
      {
        'idempotency-key': 'k1',
      },
    );

    expect(answer).toEqual({ status: 201, body: { run_id: 'r-1' }, tries: 1 });
    expect(board.received).toHaveLength(1);
    const [sent] = board.received;
    expect(sent).toMatchObject({ method: 'POST', url: '/v1/runs', body: JSON.stringify({ lane: 'alice', prompt: 'déjà vu' }) });
    expect(sent!.headers).toMatchObject({
      authorization: 'Bearer t0k',
      'content-type': 'application/json',
      'idempotency-key': 'k1',
      // Counted in bytes: the prompt has characters of two bytes.
      'content-length': String(Buffer.byteLength(sent!.body)),
    });
  });

  it('given a GET with no token, then it goes without one and without a body, and an answer that is not JSON comes back as its text', async () => {
    const board = await standIn((response) => void response.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>'));

    const answer = await boardCall({ server: board.url, db: 'unused.db' }, 'GET', '/v1/status');

    expect(answer).toEqual({ status: 502, body: '<html>Bad Gateway</html>', tries: 1 });
    expect(board.received[0]!.headers.authorization).toBeUndefined();
    expect(board.received[0]!.headers['content-type']).toBeUndefined();
    expect(board.received[0]!.body).toBe('');
  });

  it('given nothing listening, then the user is told the board did not answer, why, and how to name another', async () => {
    const server = await nothingAt();

    await expect(boardCall({ server, token: 't', db: 'unused.db' }, 'GET', '/v1/status')).rejects.toThrow(
      `the board at ${server} did not answer (connect ECONNREFUSED ${server.slice('http://'.length)}): is \`runledger daemon\` running? (--server or RUNLEDGER_SERVER sets another address)`,
    );
  });

  it('given a board that cuts the connection half way through its answer, then the user is told it did not answer', async () => {
    const board = await standIn((response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"run_');
      setTimeout(() => response.socket?.destroy(), 20);
    });

    await expect(boardCall({ server: board.url, token: 't', db: 'unused.db' }, 'GET', '/v1/status')).rejects.toThrow(
      `the board at ${board.url} did not answer (aborted)`,
    );
  });

  it('given a redirect (a proxy before the board), then it is not followed: the user is told where it pointed and to give that address', async () => {
    const elsewhere = await standIn(json(201, { run_id: 'r-1' }));
    const board = await standIn(json(308, {}, { location: `${elsewhere.url}/v1/runs` }));

    await expect(boardCall({ server: board.url, token: 't', db: 'unused.db' }, 'POST', '/v1/runs', { lane: 'x', prompt: 'p' })).rejects.toThrow(
      `the board at ${board.url} answered 308, sending the call to ${elsewhere.url}/v1/runs: give --server (or RUNLEDGER_SERVER) the board's own address`,
    );
    // The token went nowhere else.
    expect(elsewhere.received).toEqual([]);
  });
});

describe('runledger submit to a board on https:', () => {
  it('given a board whose certificate the user trusts (NODE_EXTRA_CA_CERTS), then the run is submitted, and the process ends although the board would keep the connection a minute', async () => {
    const tls = join(repoRoot, 'test/fixtures/tls');
    const server = createHttpsServer({
      cert: readFileSync(join(tls, 'board.crt')),
      key: readFileSync(join(tls, 'board.key')),
      keepAliveTimeout: 60_000,
    });
    const { port, received } = await listen(server, [], json(201, { run_id: 'r-tls' }));

    // Killed after 20 s: a process held open by its connection fails here, not after the board's minute.
    const result = await runCli(['submit', '--server', `https://127.0.0.1:${port}`, '--token', 't', '--lane', 'alice', '--prompt', 'hi'], 20_000, {
      env: { NODE_EXTRA_CA_CERTS: join(tls, 'board.crt') },
    });

    expect(result).toMatchObject({ status: 0, stdout: 'r-tls\n' });
    expect(received.map((r) => [r.method, r.url, r.headers.authorization])).toEqual([['POST', '/v1/runs', 'Bearer t']]);
  });
});
