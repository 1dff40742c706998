/**
 * Twins across two boards: two `runledger server` processes on one PostgreSQL log, a daemon joined as
 * c1 on board A, and a copy of it (same id, same token) joining board B. The computer has one push stream
 * whichever board it reaches (the log says where it is connected): the copy is refused 4409 and exits 2
 * naming why. A claim without `Runledger-Incarnation` of a run the first daemon holds is refused 409, and
 * the computer's own token (what every twin held when tokens were the computer's) speaks for none of its runs.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runToken } from '../../adapters/http/tokens.ts';
import { freshPostgresLog, withClient } from '../support/postgresLog.ts';
import { tempDir } from '../support/tempStore.ts';
import {
  addComputer,
  addSubmitToken,
  agentFiles,
  connectedComputers,
  MARKER_AGENT,
  markerCounts,
  startCli,
  startComputer,
  startPostgresServer,
  submit,
  waitFor,
  waitForState,
  waitForTerminal,
} from './support/cluster.ts';

const post = async (url: string, token: string, body: unknown = {}, headers: Record<string, string> = {}) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { detail?: { error?: string } } };
};

describe('twins across two boards on one PostgreSQL log', () => {
  it('a copy of a daemon joining the other board is refused 4409 and exits 2; header-less claims and the computer’s token get none of its runs', async () => {
    const url = await freshPostgresLog();
    const dir = tempDir();
    const [submitToken, token] = [await addSubmitToken(url, 'test'), await addComputer(url, 'c1')];
    const [a, b] = await Promise.all([startPostgresServer(url), startPostgresServer(url)]);
    const agent = agentFiles(dir);
    const first = await startComputer({ dir: join(dir, 'a'), id: 'c1', server: a.url, token, agent });
    // Board B has the first daemon's stream on A from the log.
    await waitFor('board B to see c1 connected', async () => (await connectedComputers(b.url)) === 1);

    const second = startCli(
      [
        'daemon',
        '--server',
        b.url,
        '--computer',
        'c1',
        '--token',
        token,
        '--db',
        join(dir, 'b', 'c1.db'),
        '--heartbeat-s',
        '1',
        '--exec',
        MARKER_AGENT,
      ],
      agent.env,
    );
    // Bounded: a copy let in would run until the test's timeout.
    const exit = await Promise.race([second.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 20_000))]);
    expect(exit, second.describe()).not.toBe('still running');
    if (exit === 'still running') return;
    expect(exit.code, second.describe()).toBe(2);
    expect(second.stdout + second.stderr).toMatch(/another daemon is connected .* as computer c1/);

    // Runs submitted to either board are run once each, by the first daemon.
    const runs = await Promise.all(
      [1, 2, 3, 4].map((n) => submit({ url: (n % 2 === 0 ? a : b).url, token: submitToken }, `l${n}`, `marker=m${n} sleep=50`)),
    );
    const views = await Promise.all(runs.map((runId) => waitForTerminal(a.url, runId)));
    expect(views.map((v) => v.state)).toEqual(runs.map(() => 'succeeded'));
    expect(Object.values(markerCounts(agent.markers))).toEqual(runs.map(() => 1));

    // A run the first daemon holds: a claim that names no incarnation is a life of its own, refused.
    const held = await submit({ url: b.url, token: submitToken }, 'held', 'marker=held sleep=2500');
    await waitForState(b.url, held, ['running']);
    for (const board of [a, b]) {
      const claim = await post(`${board.url}/v1/computers/c1/runs/${held}/claim`, token);
      expect(claim, `a header-less claim on ${board.url}`).toMatchObject({ status: 409, body: { detail: { error: 'claimed_elsewhere' } } });
    }
    // Its token is bound to the life that claimed it: the computer's token of older boards speaks for it no more.
    const secret = await withClient(
      url,
      async (client) => (await client.query<{ value: string }>(`SELECT value FROM board_secrets WHERE name = 'board'`)).rows[0]!.value,
    );
    const computers = runToken(secret, held, 'c1');
    expect((await post(`${b.url}/v1/runs/${held}/heartbeat`, computers)).status).toBe(401);
    expect((await post(`${a.url}/v1/runs/${held}/complete`, computers, { ok: false, error: 'a twin' })).status).toBe(401);
    expect(await waitForTerminal(a.url, held)).toMatchObject({ state: 'succeeded' });
    expect(first.process.alive).toBe(true);
  });
});
