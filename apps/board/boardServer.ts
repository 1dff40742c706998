import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Observable } from 'rxjs';
import type { BoardTransport } from '../../adapters/http/boardClient.ts';
import { boardApi } from '../../adapters/http/httpApi.ts';
import { localTransport } from '../../adapters/http/localTransport.ts';
import { RefusalCounter } from '../../adapters/http/refusalCounter.ts';
import type { RunListPage, RunListQuery } from '../../adapters/http/runListing.ts';
import type { RunProgress } from '../../adapters/http/runProgress.ts';
import type { NewDomainEvent } from '../../events/catalog.ts';
import { messageOf } from '../../events/thrown.ts';
import type { UsageTally } from '../../projections/usage.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import type { ActorSystem } from '../../runtime/actors/runtime.ts';
import { type FailureLog, stderrLog } from '../../runtime/actors/untilRecorded.ts';
import type { ComputerEvents } from '../../runtime/store/computerEvents.ts';
import type { OpenedLog } from '../../runtime/store/eventStore.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import { BoardHost } from './boardHost.ts';
import type { BoardPeers } from './peers/boardPeers.ts';

export interface BoardServerOptions {
  readonly system: ActorSystem;
  readonly store: OpenedLog;
  readonly clock: Clock;
  readonly host: string;
  readonly port: number;
  readonly boardSecret: string;
  readonly submitToken: string | null;
  readonly leaseMs?: number;
  /** The other boards of its log (PostgreSQL); alone by default. */
  readonly peers?: BoardPeers;
  /** Where the events its computers report are kept, apart from the log (see ComputerEvents). */
  readonly reported?: ComputerEvents;
  readonly status?: () => unknown;
  /** Usage totals per login since the log began, for `/metrics` (the usage projection's). */
  readonly usage?: () => Record<string, UsageTally>;
  /** Pages beside the API (the live web view): made once the read rule and the submit token are known. */
  readonly web?: (access: WebAccess) => WebRoutes;
  /** The daemon's log: what failed outside a request, and went on. */
  readonly log?: FailureLog;
}

/** What a web view needs from the board to apply the API's read rule (docs/rules.md#tools). */
export interface WebAccess {
  readonly openReads: boolean;
  isSubmitToken(token: string | null): boolean;
  /** The same, asking the log for a token another process recorded a moment ago (`runledger token add`): the sign-in's check. */
  acceptsSubmitToken?(token: string | null): Promise<boolean>;
  readonly rejected: (method: string, path: string, status: number, code: string, reason: string) => void;
  /** What each open run's agent is doing (heartbeats' `progress`, in memory): the run page shows it live. */
  readonly progress?: Pick<RunProgress, 'of' | 'changed'>;
  /** The runs as `GET /v1/runs` lists them: a lane page's turns. */
  readonly listRuns?: (query: RunListQuery) => Promise<RunListPage>;
  /** Told each time a computer's report kept events (see ComputerEvents). */
  readonly reports?: Observable<void>;
}

/** GET pages that are not API routes, and WebSocket upgrades of their own. */
export interface WebRoutes {
  handles(request: IncomingMessage): boolean;
  handle(request: IncomingMessage, response: ServerResponse): void;
  upgrades(request: IncomingMessage): boolean;
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
}

export interface BoardServer {
  readonly url: string;
  readonly board: BoardHost;
  /**
   * The API reached from this process (a computer of the same daemon): the same handler, without HTTP.
   * None where the board is not served by the API (the simulator's, reached through its network).
   */
  readonly local?: BoardTransport;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** A board made and not yet started: its host, and the start that serves it. */
export interface UnstartedBoard {
  readonly board: BoardHost;
  /** Starts the host, then listens; a start that fails stops what it started. */
  start(): Promise<BoardServer>;
}

/** The board on HTTP and WebSocket: `runledger server`, and the board half of `runledger daemon`. */
export function startBoardServer(options: BoardServerOptions): Promise<BoardServer> {
  return makeBoardServer(options).start();
}

/**
 * The board's host with its edge records, made before anything runs (the daemon makes it before its
 * folds catch up, as the simulator does), and its start on HTTP and WebSocket.
 */
export function makeBoardServer(options: BoardServerOptions): UnstartedBoard {
  const { store, clock } = options;
  const log = options.log ?? stderrLog;
  // An edge record that cannot be written loses a line of the audit, never the answer to the request.
  const edge = (event: NewDomainEvent): Promise<void> =>
    store.append({ expected: { 'board:main': 'any' }, events: [event] }).then(
      () => undefined,
      // A log that cannot be written is told once per outage by the store itself, not once per refusal.
      (error: Error) => {
        if (!(error instanceof LogUnwritableError)) process.emitWarning(`board: ${event.type} not recorded: ${error.message}`);
      },
    );
  const record = (method: string, path: string, status: number, code: string, reason: string) =>
    void edge({
      stream: 'board:main',
      type: 'board.request.rejected',
      data: { method: method.slice(0, 16), path, status, code, reason: reason.slice(0, 500) },
      at: clock.now(),
    });
  const anonymous = new RefusalCounter(clock, (summary) =>
    edge({ stream: 'board:main', type: 'board.requests.refused', data: summary, at: clock.now() }),
  );
  const rejected = (method: string, path: string, status: number, code: string, reason: string, unproven: boolean) =>
    unproven ? anonymous.count(code) : record(method, path, status, code, reason);
  const board = new BoardHost({
    system: options.system,
    store,
    clock,
    boardSecret: options.boardSecret,
    submitToken: options.submitToken,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    ...(options.peers ? { peers: options.peers } : {}),
    ...(options.reported ? { reported: options.reported } : {}),
    log,
    refusedStream: (computerId, incarnation) =>
      record(
        'GET',
        `/v1/computers/${computerId}/stream`,
        409,
        'computer_connected_elsewhere',
        `push stream refused: computer ${computerId} is connected already${incarnation === null ? '' : ` (this one is incarnation ${incarnation})`}`,
      ),
  });
  return { board, start: () => serveBoard(board, options, rejected, anonymous) };
}

async function serveBoard(
  board: BoardHost,
  options: BoardServerOptions,
  rejected: (method: string, path: string, status: number, code: string, reason: string, unproven: boolean) => void,
  anonymous: RefusalCounter,
): Promise<BoardServer> {
  const log = options.log ?? stderrLog;
  await board.start();
  let web: WebRoutes | undefined;
  try {
    const openReads = LOOPBACK.has(options.host);
    const api = boardApi(board, {
      openReads,
      rejected,
      ...(options.status ? { status: options.status } : {}),
      ...(options.usage ? { usage: options.usage } : {}),
    });
    // The web view refuses only callers without a token (a foreign Host, no view cookie): counted.
    web = options.web?.({
      openReads,
      isSubmitToken: (token) => board.isSubmitToken(token),
      acceptsSubmitToken: (token) => board.acceptsSubmitToken(token),
      rejected: (m, p, s, c, r) => rejected(m, p, s, c, r, true),
      progress: board.progress,
      listRuns: (query) => board.listRuns(query),
      reports: board.reports,
    });
    const view = web;
    const server: Server = createServer((request, response) => {
      if (view?.handles(request)) view.handle(request, response);
      else void api.handle(request, response);
    });
    // An upgrade that fails unexpectedly loses its socket, never the board (an async throw here would end the process).
    server.on('upgrade', (request, socket, head) => {
      // From here the socket is ours, and Node's server no longer listens for its errors: a client that
      // resets it (while its token is checked, or after a refusal) would otherwise end the board with an
      // uncaught ECONNRESET. The socket is gone either way; ws adds its own listener once it upgrades.
      socket.on('error', () => socket.destroy());
      if (view?.upgrades(request)) view.upgrade(request, socket, head);
      else {
        void api.upgrade(request, socket, head).catch((error: unknown) => {
          log(`board: a push stream upgrade failed (${messageOf(error)}); its socket is closed, the board goes on`);
          socket.destroy();
        });
      }
    });
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
    return listeningBoard(server, board, api.respond, view, () => anonymous.flush());
  } catch (error) {
    // The port is taken, the address refused, the web view could not start: what started for this
    // board stops, or its follower would go on reading a log the daemon is about to close.
    await board.stop();
    await anonymous.flush();
    web?.close();
    throw error;
  }
}

/** The handle of a board whose server listens: its address, and a close that stops all it started. */
function listeningBoard(
  server: Server,
  board: BoardHost,
  respond: Parameters<typeof localTransport>[0],
  web: WebRoutes | undefined,
  flush: () => Promise<void>,
): BoardServer {
  // A server listening on a port (not a pipe) has an AddressInfo for its address.
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  return {
    url,
    board,
    local: localTransport(respond, url),
    async close() {
      await board.stop();
      // What was counted and not yet recorded is recorded before the log closes.
      await flush();
      web?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
