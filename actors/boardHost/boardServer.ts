import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../events/clock.ts';
import type { EventStore } from '../../events/store/eventStore.ts';
import type { ActorSystem } from '../runtime.ts';
import { BoardHost } from './boardHost.ts';
import { boardApi } from './httpApi.ts';

export interface BoardServerOptions {
  readonly system: ActorSystem;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly host: string;
  readonly port: number;
  readonly boardSecret: string;
  readonly submitToken: string;
  readonly leaseMs?: number;
  readonly status?: () => unknown;
}

export interface BoardServer {
  readonly url: string;
  readonly board: BoardHost;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** The board on HTTP and WebSocket: `runledger server`, and the board half of `runledger daemon`. */
export async function startBoardServer(options: BoardServerOptions): Promise<BoardServer> {
  const { store, clock } = options;
  const board = new BoardHost({
    system: options.system,
    store,
    clock,
    boardSecret: options.boardSecret,
    submitToken: options.submitToken,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
  });
  await board.start();
  const api = boardApi(board, {
    openReads: LOOPBACK.has(options.host),
    ...(options.status ? { status: options.status } : {}),
    rejected: (method, path, status, code, reason) => {
      void store
        .append({
          expected: { 'board:main': 'any' },
          events: [{ stream: 'board:main', type: 'board.request.rejected', data: { method: method.slice(0, 16), path, status, code, reason: reason.slice(0, 500) }, at: clock.now() }],
        })
        .catch(() => {});
    },
  });
  const server: Server = createServer((request, response) => void api.handle(request, response));
  server.on('upgrade', (request, socket, head) => void api.upgrade(request, socket, head));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    board,
    async close() {
      board.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
