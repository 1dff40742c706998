/**
 * The embedded daemon's computer calls the board of its own process without HTTP (issue 25): its claim,
 * heartbeats and completion are handed to the board's API handler, which answers them exactly as it
 * answers a call over loopback (routes, tokens, body checks, refusals and their records alike).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BoardClient } from '../../adapters/http/boardClient.ts';
import { startDaemon } from '../../apps/daemon/startDaemon.ts';
import { waitFor, waitForTerminal } from '../e2e/support/cluster.ts';
import { tempDir } from '../support/tempStore.ts';

/** The paths of the HTTP requests every server of this process receives from now until the test ends. */
function requestsSeen(): string[] {
  const paths: string[] = [];
  const seen = (message: unknown) => paths.push((message as { request: IncomingMessage }).request.url ?? '');
  subscribe('http.server.request.start', seen);
  onTestFinished(() => void unsubscribe('http.server.request.start', seen));
  return paths;
}

async function embedded(exec = 'echo ok') {
  const dir = tempDir();
  const db = join(dir, 'runledger.db');
  const daemon = await startDaemon({ db, port: 0, exec, slots: 2, budgetNote: false });
  onTestFinished(() => daemon.close());
  const submitToken = readFileSync(join(dir, 'token'), 'utf8').trim();
  const computerToken = readFileSync(join(dir, 'computer-local.token'), 'utf8').trim();
  const submit = async (lane: string) => {
    const response = await fetch(`${daemon.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${submitToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lane, prompt: 'hi' }),
    });
    return ((await response.json()) as { run_id: string }).run_id;
  };
  return { daemon, db, submit, computerToken };
}

describe("the embedded daemon's calls to its own board", () => {
  it('given a run, when it goes through, then its claim, heartbeat and completion reach the board without an HTTP request', async () => {
    const { daemon, submit } = await embedded();
    const paths = requestsSeen();

    const id = await submit('a');
    expect(await waitForTerminal(daemon.url!, id)).toMatchObject({ state: 'succeeded', reply: 'ok' });

    expect(paths).toContain('/v1/runs');
    expect(paths.filter((path) => /\/(claim|heartbeat|reply|complete)$/.test(path))).toEqual([]);
  });

  it('given the same calls made over HTTP and in the process, then the answers are the same, refusals included, and each refusal is recorded alike', async () => {
    const { daemon, db, computerToken } = await embedded();
    const overHttp = new BoardClient(daemon.url!, 'local', computerToken);
    onTestFinished(() => overHttp.close());
    const inProcess = new BoardClient(daemon.board!.local!, 'local', computerToken);
    const impostor = new BoardClient(daemon.board!.local!, 'local', 'not-the-token');
    const impostorOverHttp = new BoardClient(daemon.url!, 'local', 'not-the-token');
    onTestFinished(() => impostorOverHttp.close());

    const calls = [
      // A run nobody submitted: refused by the board's decider, after the computer's token was proved.
      (client: BoardClient) => client.claim('no-such-run', 'life-1'),
      // A malformed incarnation: refused at the edge, after the token was proved.
      (client: BoardClient) => client.claim('no-such-run', 'bad life!'),
      // A run token that is none: 401.
      (client: BoardClient) => client.heartbeat('no-such-run', 'wrong', 'half way'),
      (client: BoardClient) => client.complete('no-such-run', 'wrong', { ok: true }),
      // An id that breaks the id rule.
      (client: BoardClient) => client.claim('bad id!'),
    ];
    for (const call of calls) {
      const answer = await call(inProcess);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer).toEqual(await call(overHttp));
    }
    expect(await impostor.claim('no-such-run')).toEqual(await impostorOverHttp.claim('no-such-run'));

    // A refusal to a caller that proved its token is recorded, once per call, whichever way it came.
    const recorded = async () => {
      const read = new Database(db, { readonly: true });
      try {
        const rows = read.prepare("SELECT type, data FROM events WHERE type IN ('board.request.refused', 'board.request.rejected')").all() as {
          type: string;
          data: string;
        }[];
        return rows.map((row) => ({ type: row.type, ...(JSON.parse(row.data) as { code: string }) })).map(({ type, code }) => `${type} ${code}`);
      } finally {
        read.close();
      }
    };
    const expected = [
      'board.request.refused unknown_run',
      'board.request.refused unknown_run',
      'board.request.rejected invalid_incarnation',
      'board.request.rejected invalid_incarnation',
      'board.request.rejected invalid_id',
      'board.request.rejected invalid_id',
    ];
    await waitFor('each refusal recorded twice', async () => (await recorded()).length >= expected.length);
    expect((await recorded()).sort()).toEqual(expected.sort());
  });
});
