/**
 * A board on a log other boards write to answers `503 log_contended` (with `Retry-After`) when other
 * writers kept changing what a request decides on: nothing was recorded, so the same request may be
 * sent again. The CLI's calls do so, waiting what the board asks, a few times, before they give up and
 * say why. Through the real entry point, against a stand-in board on 127.0.0.1 that counts its calls.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../e2e/support/cluster.ts';

const CONTENDED = {
  detail: { error: 'log_contended', message: 'other writers kept changing what this request decides on; nothing was recorded: try again' },
};

/** A stand-in board: `answers` in turn (the last one for good); what each call sent is kept. */
async function standIn(answers: readonly { status: number; body: unknown; retryAfter?: string }[]) {
  const calls: { method: string; url: string; body: string; key: string | undefined }[] = [];
  const server = createServer(async (request: IncomingMessage, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    calls.push({ method: request.method!, url: request.url!, body, key: request.headers['idempotency-key'] as string | undefined });
    const answer = answers[Math.min(calls.length, answers.length) - 1]!;
    response.writeHead(answer.status, {
      'content-type': 'application/json',
      ...(answer.retryAfter !== undefined ? { 'retry-after': answer.retryAfter } : {}),
    });
    response.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, calls };
}

describe('runledger submit against a contended log', () => {
  it('given two 503 log_contended answers, then the same request is sent again and the third answer is printed', async () => {
    const board = await standIn([
      { status: 503, body: CONTENDED, retryAfter: '0' },
      { status: 503, body: CONTENDED, retryAfter: '0' },
      { status: 201, body: { run_id: 'r-1' } },
    ]);
    const result = await runCli(['submit', '--server', board.url, '--token', 't', '--lane', 'alice', '--prompt', 'hi', '--idempotency-key', 'k1']);
    expect(result).toMatchObject({ status: 0, stdout: 'r-1\n' });
    expect(board.calls).toHaveLength(3);
    // The same request each time: the board recorded nothing, and the key keeps a lost answer from running it twice.
    expect(new Set(board.calls.map((c) => JSON.stringify(c)))).toHaveProperty('size', 1);
  });

  it('given a board that stays contended, then it gives up after its tries and says why: exit 2, no endless retry', async () => {
    const board = await standIn([{ status: 503, body: CONTENDED, retryAfter: '0' }]);
    const result = await runCli(['submit', '--server', board.url, '--token', 't', '--lane', 'alice', '--prompt', 'hi']);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/the board answered 503 log_contended: other writers kept changing .* \(5 tries\)/);
    expect(board.calls).toHaveLength(5);
  });

  it('given another 503 (a board draining, a proxy), then it is not sent again: only log_contended says nothing was recorded', async () => {
    const board = await standIn([{ status: 503, body: { detail: { error: 'draining', message: 'the board is shutting down' } }, retryAfter: '0' }]);
    const result = await runCli(['submit', '--server', board.url, '--token', 't', '--lane', 'alice', '--prompt', 'hi']);
    expect(result.status).toBe(2);
    expect(board.calls).toHaveLength(1);
  });
});
