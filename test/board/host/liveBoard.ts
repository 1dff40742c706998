import { request as httpRequest } from 'node:http';
import { onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { addComputer } from '../../../apps/board/addComputer.ts';
import { type BoardServerOptions, startBoardServer } from '../../../apps/board/boardServer.ts';
import type { DomainEvent } from '../../../events/catalog.ts';
import { systemClock } from '../../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../../runtime/actors/runtime.ts';
import type { OpenedLog } from '../../../runtime/store/eventStore.ts';
import type { SqliteEventStore, SqliteStoreOptions } from '../../../runtime/store/sqlite/sqliteEventStore.ts';
import { openTempStore, tempDbPath } from '../../support/tempStore.ts';

export const SUBMIT = 'submit-token';

/**
 * A real board server on 127.0.0.1 (port 0) over a real SQLite log in a temp folder, with `computers`
 * added; everything it started stops when the test ends.
 */
export async function liveBoard(
  computers: string[] = [],
  options: Partial<Pick<BoardServerOptions, 'clock'>> &
    Pick<SqliteStoreOptions, 'faults'> & {
      /** The board's view of its log: the store, or one standing in front of it (refusing appends, say). */
      wrap?: (store: SqliteEventStore) => OpenedLog;
    } = {},
) {
  const { faults, wrap, ...serverOptions } = options;
  const path = tempDbPath();
  const store = await openTempStore(path, { sync: 'normal', ...(faults ? { faults, report: () => undefined } : {}) });
  const system = startActorSystem({ onError: () => {} });
  const server = await startBoardServer({
    system,
    store: wrap ? wrap(store) : store,
    clock: systemClock,
    host: '127.0.0.1',
    port: 0,
    boardSecret: 'secret',
    submitToken: SUBMIT,
    ...serverOptions,
  });
  const clock = options.clock ?? systemClock;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.close();
    stopSystem(system);
  };
  onTestFinished(close);
  const tokens: Record<string, string> = {};
  for (const id of computers) tokens[id] = (await addComputer(store, clock, id)).token;
  const log = async (): Promise<DomainEvent[]> => store.readAll(0, 1_000_000);
  const call = async (method: string, path: string, init: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
      ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
    });
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: the tests read answers of every route by their fields
    return { status: response.status, body: (text ? JSON.parse(text) : null) as any };
  };
  const submit = async (lane: string, prompt = `a turn of ${lane}`): Promise<string> => {
    const answer = await call('POST', '/v1/runs', { token: SUBMIT, body: { lane, prompt } });
    if (answer.status !== 201) throw new Error(`submit answered ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.run_id as string;
  };
  /** A raw request with a Host header of our own (fetch will not send one). */
  const rawStatus = (method: string, path: string, host: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const url = new URL(server.url);
      const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers: { host } }, (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (c: string) => (body += c))
          .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  return { server, store, path, url: server.url, tokens, log, call, submit, rawStatus, close };
}

export type LiveBoard = Awaited<ReturnType<typeof liveBoard>>;

/** A computer's push stream, with the frames it got and how it closed. */
export interface Stream {
  readonly ws: WebSocket;
  readonly frames: { id: string; kind: string; data: { run_id: string } }[];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<void>;
}

/** `options.repos`: the `Runledger-Repos` header's value, as sent (none: an older computer's upgrade). */
export function openStream(board: LiveBoard, computerId: string, incarnation?: string, options: { host?: string; repos?: string } = {}): Stream {
  const ws = new WebSocket(`${board.url.replace('http', 'ws')}/v1/computers/${computerId}/stream`, {
    headers: {
      authorization: `Bearer ${board.tokens[computerId]}`,
      ...(incarnation ? { 'runledger-incarnation': incarnation } : {}),
      ...(options.host ? { host: options.host } : {}),
      ...(options.repos === undefined ? {} : { 'runledger-repos': options.repos }),
    },
  });
  const frames: Stream['frames'] = [];
  ws.on('message', (data) => frames.push(JSON.parse(data.toString())));
  ws.on('error', () => {});
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const opened = new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
  });
  onTestFinished(() => ws.terminate());
  return { ws, frames, closed, opened };
}

/** Waits, bounded, until `check` holds (a real socket or server: the event, never a sleep of luck). */
export async function until<T>(
  check: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  what: string,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const ofType = (log: readonly DomainEvent[], type: string) => log.filter((e) => e.type === type);
