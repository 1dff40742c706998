/**
 * A board whose PostgreSQL goes away mid-life (issue 31): `runledger server` reaches the test server
 * through a TCP hop that then goes down (every connection cut, every new one too), as a stopped server
 * or a dead port is met. A submit must be answered at once, 507 `log_unwritable` with the cause, never
 * 500 after a 30 s hang (docs/rules.md#postgresql-board), and the board must take submits again once
 * the server is back.
 */
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../support/daemonProcess.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { outageProxy } from '../support/outageProxy.ts';
import { freshPostgresLog } from '../support/postgresLog.ts';
import { ServerProcess } from '../support/serverProcess.ts';

async function submit(board: ServerProcess, token: string, lane: string): Promise<{ status: number; body: unknown; ms: number }> {
  const began = performance.now();
  const answer = await fetch(`${board.url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lane, prompt: 'hello' }),
    signal: AbortSignal.timeout(45_000),
  }).catch(async (error: unknown) => {
    // Seen under load: the board closed the connection unanswered. Whether it ended (given a moment to), and what it said.
    const ended = await Promise.race([board.exited, new Promise((resolve) => setTimeout(() => resolve(null), 3_000))]);
    const state = ended ? `ended: ${JSON.stringify(ended)}` : 'lives';
    throw new Error(`submit ${lane}: ${String(error)} (the board ${state}); it said:\n${board.output}`, { cause: error });
  });
  return { status: answer.status, body: await answer.json(), ms: performance.now() - began };
}

describe('a board whose PostgreSQL goes away', () => {
  it('given the server unreachable under a running board, then every submit is answered 507 log_unwritable at once, /healthz still answers, and submits go through again once it is back', async () => {
    const url = await freshPostgresLog();
    const proxy = await outageProxy(new URL(url));
    const added = await runInProcess(['token', 'add', 'ci', '--db', url, '--json']);
    expect(added.status, added.stderr).toBe(0);
    const { token } = JSON.parse(added.stdout) as { token: string };
    const board = await ServerProcess.start(['--db', proxy.url(url)]);
    expect((await submit(board, token, 'before')).status).toBe(201);

    proxy.down();
    // Several, a moment apart: the first failure must not leave the board's actor unable to answer the next.
    const answers: Awaited<ReturnType<typeof submit>>[] = [];
    for (let i = 0; i < 4; i++) {
      answers.push(await submit(board, token, `during-${i}`));
      await new Promise((r) => setTimeout(r, 500));
    }
    const health = await fetch(`${board.url}/healthz`, { signal: AbortSignal.timeout(5_000) });
    for (const down of answers) {
      expect(down.status, JSON.stringify(down.body)).toBe(507);
      expect(down.ms).toBeLessThan(5_000);
      expect(down.body).toMatchObject({ detail: { error: 'log_unwritable', message: expect.stringMatching(/^the log cannot be written: /) } });
    }
    expect(health.status).toBe(200);
    expect(board.output).toMatch(/cannot be written/);

    proxy.up();
    await waitUntil('a submit to go through again', async () => (await submit(board, token, 'after')).status === 201, 20_000);
  }, 60_000);
});
