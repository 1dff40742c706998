/**
 * The web view's routes and live socket without a browser: what is served, to whom (the API's read
 * rule, docs/rules.md#tools), and what the socket says first and then as the log grows.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type Daemon, startDaemon } from '../../apps/daemon/startDaemon.ts';
import { seedSubmittedRuns } from '../support/seededRuns.ts';
import { holdOpen, startTestDaemon, submit, type TestBoard, waitFor } from './webSupport.ts';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET with the headers given (fetch would not let a test set Host). */
function get(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const r = request(url, { headers }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    });
    r.on('error', reject).end();
  });
}

/** Opens the live socket; resolves to its first message, or to the HTTP status it was refused with. */
function live(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ ws: WebSocket; messages: unknown[]; first: Promise<Record<string, unknown>> } | { refused: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers });
    const messages: Record<string, unknown>[] = [];
    let gotFirst: (m: Record<string, unknown>) => void;
    const first = new Promise<Record<string, unknown>>((r) => (gotFirst = r));
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as Record<string, unknown>;
      messages.push(message);
      if (messages.length === 1) gotFirst(message);
    });
    ws.on('open', () => resolve({ ws, messages, first }));
    ws.on('unexpected-response', (_req, response) => {
      resolve({ refused: response.statusCode! });
      ws.terminate();
    });
    ws.on('error', () => {
      // followed by its close
    });
  });
}

async function opened(url: string, headers: Record<string, string> = {}) {
  const socket = await live(url, headers);
  if ('refused' in socket) throw new Error(`live socket refused: ${socket.refused}`);
  return socket;
}

describe('the web view on loopback', () => {
  let board: TestBoard;
  beforeAll(async () => {
    board = await startTestDaemon();
  });
  afterAll(() => board?.close());

  it('serves its pages and files as they are, with a content security policy, beside the API', async () => {
    const home = await get(`${board.url}/`);
    expect(home.status).toBe(200);
    expect(home.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(home.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(home.body).toContain('<main id="main"');
    expect((await get(`${board.url}/static/live.js`)).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await get(`${board.url}/runs/0f1e2d3c-aaaa-bbbb-cccc-000000000000`)).body).toContain('id="timeline"');
    expect((await get(`${board.url}/runs/..%2F..%2Fetc`)).status).toBe(404);
    expect((await get(`${board.url}/static/../package.json`)).status).not.toBe(200);
    expect((await get(`${board.url}/static/nothing.js`)).status).toBe(404);
    // The API is untouched: its routes answer as before, and what the view does not serve is the API's 404.
    expect((await get(`${board.url}/healthz`)).status).toBe(200);
    expect(JSON.parse((await get(`${board.url}/v1/nothing`)).body)).toMatchObject({ detail: { error: 'not_found' } });
  });

  it('refuses a page asked for by another name than loopback (DNS rebinding) and a socket from another origin', async () => {
    const renamed = await get(`${board.url}/`, { host: `attacker.example:${new URL(board.url).port}` });
    expect(renamed.status).toBe(403);
    expect(await live(`${board.url}/v1/live`, { origin: 'http://attacker.example' })).toEqual({ refused: 403 });
    expect(await live(`${board.url}/v1/live?run=not..an..id`)).toEqual({ refused: 400 });
  });

  it("says hello with a snapshot and the log's tail, then pushes summaries and deltas of the snapshot as runs move", async () => {
    const page = await opened(`${board.url}/v1/live`, { origin: board.url });
    const hello = await page.first;
    expect(hello).toMatchObject({ type: 'hello', view: 'board' });
    expect(hello.snapshot).toMatchObject({ lanes: [], claims: [], sessions: [], computers: [{ id: 'local', connected: true }] });

    // Held open until the page was sent a delta: a turn begun and ended between two reads of the view
    // changes nothing a board page shows, and would send none.
    const held = holdOpen();
    const runId = await submit(board, 'web', `hello, ${held.word}`);
    const run = await opened(`${board.url}/v1/live?run=${runId}`);
    const runHello = (await run.first) as { type: string; run: { lane: string }; entries: { step: string; reason: string }[] };
    expect(runHello.type).toBe('hello');
    expect(runHello.run.lane).toBe('web');
    expect(runHello.entries[0]).toMatchObject({ step: 'board.run.submitted', reason: 'submitted to lane web' });

    await waitFor('a delta of the board page while the run is held', () => page.messages.some((m) => (m as { type: string }).type === 'delta'));
    held.release();
    await waitFor(
      'the run to finish, live on both sockets, and the snapshot to change',
      () =>
        page.messages.some((m) => (m as { type: string }).type === 'delta') &&
        page.messages.some((m) =>
          (m as { type: string; events?: { step: string; runId: string }[] }).events?.some(
            (e) => e.step === 'board.run.finished' && e.runId === runId,
          ),
        ) &&
        run.messages.some((m) => (m as { entries?: { step: string }[] }).entries?.some((e) => e.step === 'board.run.finished')),
    );
    // The snapshot's changes, each numbered from the one before, from the hello's on.
    const deltas = page.messages.filter((m) => (m as { type: string }).type === 'delta') as { from: number; to: number }[];
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.map((d) => d.from)).toEqual([(hello as { version: number }).version, ...deltas.slice(0, -1).map((d) => d.to)]);
    // Each entry once, in log order, across the hello and the live batches.
    const seqs = run.messages.flatMap((m) => ((m as { entries?: { seq: number }[] }).entries ?? []).map((e) => e.seq));
    expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
    page.ws.close();
    run.ws.close();
  });
});

describe('the web view off loopback (runledger server --host 0.0.0.0)', () => {
  let board: TestBoard;
  beforeAll(async () => {
    board = await startTestDaemon({ host: '0.0.0.0', boardOnly: true, exec: '' });
  });
  afterAll(() => board?.close());
  const local = () => board.url.replace('0.0.0.0', '127.0.0.1');

  it('needs the submit token, once in a link, traded for a view cookie that leaves the token out of the address bar', async () => {
    expect((await get(`${local()}/`)).status).toBe(401);
    expect(await live(`${local()}/v1/live`)).toEqual({ refused: 401 });
    expect(await live(`${local()}/v1/live?token=wrong`)).toEqual({ refused: 401 });

    const traded = await get(`${local()}/runs/abc?token=${board.token}`);
    expect(traded.status).toBe(303);
    expect(traded.headers.location).toBe('/runs/abc');
    const cookie = String(traded.headers['set-cookie']).split(';')[0]!;
    expect(cookie).toMatch(/^runledger_view=/);
    expect(cookie).not.toContain(board.token);
    expect(String(traded.headers['set-cookie'])).toContain('HttpOnly');

    expect((await get(`${local()}/`, { cookie })).status).toBe(200);
    expect((await get(`${local()}/`, { authorization: `Bearer ${board.token}` })).status).toBe(200);
    // The history's data holds prompts and replies: the same rule.
    expect((await get(`${local()}/history/runs`)).status).toBe(401);
    expect((await get(`${local()}/history/runs`, { cookie })).status).toBe(200);
    const page = await opened(`${local()}/v1/live`, { cookie });
    expect(await page.first).toMatchObject({ type: 'hello', view: 'board' });
    page.ws.close();

    // Refusals of callers without a token are counted like the API's (docs/rules.md#the-log), once the window
    // ends or the board stops, and nothing of the query that carried a token is kept.
    await board.restart();
    const refused = (await board.daemon().store.readStream('board:main')).filter((e) => e.type === 'board.requests.refused');
    expect(refused.reduce((n, e) => n + (e.data as { count: number }).count, 0)).toBeGreaterThanOrEqual(3);
    for (const event of refused) expect(JSON.stringify(event.data)).not.toContain('wrong');
  });
});

describe('a run page by a unique prefix of its id (docs/rules.md#tools)', () => {
  const TWIN_1 = 'a1b2c3d4-0000-4000-8000-000000000001';
  const TWIN_2 = 'a1b2c3d4-0000-4000-8000-000000000002';
  const LONE = 'f00dfeed-0000-4000-8000-000000000003';
  let dir: string;
  let board: Daemon;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'runledger-web-prefix-'));
    const db = join(dir, 'runledger.db');
    await seedSubmittedRuns(db, [TWIN_1, TWIN_2, LONE]);
    board = await startDaemon({ db, port: 0, exec: '', boardOnly: true });
  });
  afterAll(async () => {
    await board?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a unique prefix leads to the run’s page under its whole id; an ambiguous one lists the candidates; an unmatched or too short one says so', async () => {
    const url = board.url!;
    const unique = await get(`${url}/runs/f00dfe`);
    expect(unique.status).toBe(302);
    expect(unique.headers.location).toBe(`/runs/${LONE}`);
    const whole = await get(`${url}/runs/${LONE}`);
    expect(whole.status).toBe(200);
    expect(whole.body).toContain('id="timeline"');

    const twins = await get(`${url}/runs/a1b2c3`);
    expect(twins.status).toBe(300);
    expect(twins.body).toContain(`a1b2c3 is ambiguous: it starts 2 runs: ${TWIN_1}, ${TWIN_2}`);
    expect(twins.body).toContain(`<a href="/runs/${TWIN_1}">`);
    expect(twins.body).toContain(`<a href="/runs/${TWIN_2}">`);

    const none = await get(`${url}/runs/beefbeef`);
    expect(none.status).toBe(404);
    expect(none.body).toContain('no run starts with beefbeef');
    const short = await get(`${url}/runs/a1b2`);
    expect(short.status).toBe(404);
    expect(short.body).toContain('a run id prefix needs at least 6 characters');
  });

  it('the board answers the run ids a prefix starts (GET /v1/runs?prefix=), and refuses a bad prefix', async () => {
    const url = board.url!;
    expect(JSON.parse((await get(`${url}/v1/runs?prefix=a1b2`)).body)).toEqual({ run_ids: [TWIN_1, TWIN_2] });
    expect(JSON.parse((await get(`${url}/v1/runs?prefix=beef`)).body)).toEqual({ run_ids: [] });
    const bad = await get(`${url}/v1/runs?prefix=..%2F`);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ detail: { error: 'invalid_prefix' } });
  });
});
