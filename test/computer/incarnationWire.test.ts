/**
 * The computer's side of one life per computer id (docs/rules.md#wire-and-cli): its claims and its push stream
 * name the daemon's incarnation, a claim a restart repeats names the life that started it, and a stream
 * the board refuses with 4409 stops the daemon (exit 2) instead of taking turns with its twin.
 * The board here is a raw HTTP and WebSocket server on loopback that records what it was sent, one per
 * case: the cases, which wait on the daemon's turns and drain, run at once (describe.concurrent).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { agentFiles, eventsOf, MARKER_AGENT, markerCounts, readLog, startCli, waitFor } from '../e2e/support/cluster.ts';
import { tempDir } from '../support/tempStore.ts';
import { ownScope, whenTestEnds } from '../support/testScope.ts';

interface Claim {
  readonly runId: string;
  readonly incarnation: string | undefined;
  answer(status: number, body: unknown): void;
}

async function rawBoard() {
  const upgrades: (string | undefined)[] = [];
  const claims: Claim[] = [];
  const completed: string[] = [];
  let socket: WebSocket | null = null;
  let refuse = false;
  const send = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const claim = /^\/v1\/computers\/c1\/runs\/([^/]+)\/claim$/.exec(req.url ?? '');
      if (claim) {
        claims.push({
          runId: claim[1]!,
          incarnation: req.headers['runledger-incarnation'] as string | undefined,
          answer: (status, body) => send(res, status, body),
        });
        return;
      }
      const complete = /^\/v1\/runs\/([^/]+)\/complete$/.exec(req.url ?? '');
      if (complete) completed.push(complete[1]!);
      send(res, 200, { cancel_requested: false });
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws, req) => {
    upgrades.push(req.headers['runledger-incarnation'] as string | undefined);
    if (refuse) return ws.close(4409, 'computer_connected_elsewhere');
    socket = ws;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  whenTestEnds(() => {
    for (const client of wss.clients) client.terminate();
    wss.close();
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    upgrades,
    claims,
    completed,
    push(runId: string) {
      socket!.send(JSON.stringify({ id: `f-${runId}`, kind: 'run.requested', data: { run_id: runId, lane: 'A' } }));
    },
    refuseStreams() {
      refuse = true;
    },
    /** The live stream blips (its socket is cut), and its reconnect finds another daemon holding it. */
    cutStreamToTwin() {
      refuse = true;
      socket?.terminate();
    },
  };
}

const granted = (runId: string, sleepMs = 10) => ({
  run: { run_id: runId, lane: 'A', prompt: `marker=${runId} sleep=${sleepMs}`, agent_id: null, timeout_s: null },
  run_token: `token-${runId}`,
  skills: [],
});

describe.concurrent("a computer's incarnation on the wire", () => {
  it(
    'its claims and its push stream name this life; a claim repeated after a restart names the life that started it',
    ownScope(async ({ expect }) => {
      const board = await rawBoard();
      const dir = tempDir();
      const db = join(dir, 'c1.db');
      const agent = agentFiles(dir);
      const daemon = () =>
        startCli(
          ['daemon', '--server', board.url, '--computer', 'c1', '--token', 't', '--db', db, '--exec', MARKER_AGENT, '--heartbeat-s', '1'],
          agent.env,
        );

      const first = daemon();
      await first.waitForOutput(/push stream connected/);
      board.push('r1');
      await waitFor('the claim of r1', () => board.claims.length === 1);
      // The board never answers it: the daemon dies with the claim in flight.
      first.kill('SIGKILL');
      await first.exited;

      // The claim is settled before the stream opens (the outbox finishes what the last life left).
      const second = daemon();
      await waitFor('the claim of r1 to be repeated', () => board.claims.length === 2);
      board.claims[1]!.answer(200, granted('r1'));
      await second.waitForOutput(/push stream connected/);
      await waitFor('r1 to be completed', () => board.completed.includes('r1'));
      board.push('r2');
      await waitFor('the claim of r2', () => board.claims.length === 3);
      board.claims[2]!.answer(200, granted('r2'));
      await waitFor('r2 to be completed', () => board.completed.includes('r2'));

      const lives = eventsOf(readLog(db), 'computer.started').map((e) => e.data.incarnation as string);
      expect(lives).toHaveLength(2);
      expect(lives[0]).not.toBe(lives[1]);
      expect(board.upgrades).toEqual(lives);
      expect(board.claims.map((c) => [c.runId, c.incarnation])).toEqual([
        ['r1', lives[0]],
        ['r1', lives[0]],
        ['r2', lives[1]],
      ]);
      expect(markerCounts(agent.markers)).toEqual({ r1: 1, r2: 1 });
      expect((await second.stop('SIGTERM')).code).toBe(0);
    }),
  );

  it(
    'a push stream refused with 4409 makes the daemon say another daemon is connected as its computer, and exit 2 without reconnecting',
    ownScope(async ({ expect }) => {
      const board = await rawBoard();
      board.refuseStreams();
      const db = join(tempDir(), 'c1.db');
      const daemon = startCli(['daemon', '--server', board.url, '--computer', 'c1', '--token', 't', '--db', db, '--exec', 'true']);
      const exit = await Promise.race([
        daemon.exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(daemon.describe())), 15_000)),
      ]);
      expect(exit, daemon.describe()).toEqual({ code: 2, signal: null });
      expect(daemon.stdout).toMatch(
        new RegExp(`another daemon is connected to ${board.url} as computer c1 .*: stop it, or give this one its own id`),
      );
      expect(board.upgrades).toHaveLength(1);
    }),
  );

  it(
    'a daemon refused with 4409 while a turn runs drains: the turn finishes and is reported with its run token, then the daemon exits 2',
    ownScope(async ({ expect }) => {
      const board = await rawBoard();
      const dir = tempDir();
      const db = join(dir, 'c1.db');
      const agent = agentFiles(dir);
      const daemon = startCli(
        ['daemon', '--server', board.url, '--computer', 'c1', '--token', 't', '--db', db, '--exec', MARKER_AGENT, '--heartbeat-s', '1'],
        agent.env,
      );
      await daemon.waitForOutput(/push stream connected/);
      board.push('r1');
      await waitFor('the claim of r1', () => board.claims.length === 1);
      // Longer than the old 5 s cut-off: the turn must outlast it and still be reported.
      board.claims[0]!.answer(200, granted('r1', 6_000));
      await waitFor('r1 to start', () => markerCounts(agent.markers).r1 === 1);

      board.cutStreamToTwin();
      const exit = await Promise.race([
        daemon.exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(daemon.describe())), 30_000)),
      ]);

      expect(exit, daemon.describe()).toEqual({ code: 2, signal: null });
      expect(daemon.stdout).toMatch(/another daemon is connected to .* as computer c1 .*: stop it, or give this one its own id/);
      expect(board.completed).toEqual(['r1']);
      const log = readLog(db);
      expect(eventsOf(log, 'run.process.exited', 'r1').map((e) => [e.data.exitCode, e.data.reply])).toEqual([[0, 'done r1']]);
      expect(eventsOf(log, 'run.settled', 'r1').map((e) => e.data.reported)).toEqual([true]);
      expect(markerCounts(agent.markers)).toEqual({ r1: 1 });
    }),
  );
});
