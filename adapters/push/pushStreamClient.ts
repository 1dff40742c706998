import WebSocket from 'ws';
import * as z from 'zod';
import { messageOf } from '../../events/thrown.ts';
import { MAX_FRAME_BYTES } from '../../events/wire/frames.ts';
import { CONNECTED_ELSEWHERE, INCARNATION_HEADER } from '../../events/wire/incarnation.ts';
import { REPOS_HEADER, reposHeader } from '../../events/wire/repos.ts';
import type { RepoAnnouncement } from '../../events/workspace.ts';
import { fullJitterMs } from '../../runtime/actors/backoff.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import { type FailureLog, stderrLog } from '../../runtime/actors/untilRecorded.ts';
import { BoardServers } from '../http/boardServers.ts';

export interface PushStreamOptions {
  /** `http://host:port` of the board, or the boards of one log: a drop moves the stream to the next (docs/rules.md#postgresql-board). */
  readonly server: string | BoardServers;
  readonly computer: string;
  readonly token: string;
  /** This life of the daemon, sent on the upgrade: the board keeps one stream per computer id. */
  readonly incarnation?: string;
  /** The repositories this computer has, announced on the upgrade (docs/rules.md#workspaces); none given: nothing announced. */
  readonly repos?: RepoAnnouncement;
  readonly clock: Clock;
  /** A frame's raw text; resolves once its input is committed (the ack follows from the decision). */
  readonly onFrame: (raw: string) => Promise<void>;
  readonly onState?: (state: 'connected' | 'disconnected', detail?: string) => void;
  /** Where a frame that could not be handled is told (the board sends an unacknowledged frame again); stderr by default. */
  readonly log?: FailureLog;
  /**
   * The board refused the stream because another daemon is connected as this computer (close code
   * 4409): no reconnect follows, for a retry would only take turns with the twin.
   */
  readonly onConnectedElsewhere?: (reason: string) => void;
  /**
   * The board itself refused the upgrade (401: the token is not this computer's; 400 or 403: the request
   * is wrong), with its JSON reason: no reconnect follows, for the same request would be refused again.
   * Another answer (a proxy's 404 while the board restarts) is retried.
   */
  readonly onRefused?: (status: number) => void;
  /** Drawn here, outside any decider: only the wire's timing depends on it. */
  readonly random?: () => number;
  /** Test seam (the simulator): opens the socket; `ws`'s own WebSocket by default. */
  readonly connect?: PushConnect;
  /**
   * How long the board may stay silent (no pong, no ping, no frame) before it is taken for gone and the
   * stream moves to the next board: a frozen board keeps its socket open and answers nothing (LIVENESS_MS by
   * default). null: not checked (the simulator's worlds, whose histories were drawn without these pings).
   */
  readonly livenessMs?: number | null;
}

/** The board's silence after which it is taken for gone, by default. */
export const LIVENESS_MS = 15_000;

/** How the client opens its socket: a `ws` WebSocket, or something that behaves as one (sim/). */
export type PushConnect = (url: string, options: { headers: Record<string, string>; maxPayload: number; handshakeTimeout?: number }) => WebSocket;
const wsConnect: PushConnect = (url, options) => new WebSocket(url, options);

/**
 * The computer's end of the push stream: frames in, acks out, and a reconnect with full-jitter
 * backoff (1 s base, 30 s cap) whenever the connection drops, a frame over the limit included (1009).
 * It checks the board's liveness itself (pings, see `watchLiveness`): a board that stops answering
 * without closing (frozen, its machine gone) is left like one that closed.
 */
export class PushStreamClient {
  private socket: WebSocket | null = null;
  private attempt = 0;
  private stopped = false;
  private cancelRetry: (() => void) | null = null;
  private readonly servers: BoardServers;

  constructor(private readonly options: PushStreamOptions) {
    this.servers = typeof options.server === 'string' ? new BoardServers([options.server]) : options.server;
  }

  start(): void {
    this.connect();
  }

  /** Sends an ack on the live connection; dropped when there is none (the board pushes again). */
  acknowledge(frameId: string | null, status: number, reason: string): void {
    if (this.socket?.readyState !== WebSocket.OPEN) return;
    this.socket.send(JSON.stringify({ ack: frameId, status, reason }));
  }

  get connected(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /**
   * Closes the stream for good. Resolves once its close was heard and said (`onState`), within a second:
   * a daemon's last line, that it stopped, comes after the line saying its stream went.
   */
  stop(): Promise<void> {
    this.stopped = true;
    this.cancelRetry?.();
    const socket = this.socket;
    this.socket = null;
    if (!socket || socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    const closed = new Promise<void>((resolve) => {
      const bound = setTimeout(resolve, 1_000).unref();
      // Listened to after the close handler of connect(), so its line is said first.
      socket.once('close', () => {
        clearTimeout(bound);
        resolve();
      });
    });
    socket.close(1000, 'computer stopping');
    return closed;
  }

  private connect(): void {
    const { computer, token } = this.options;
    const server = this.servers.current();
    const url = `${server.replace(/^http/, 'ws')}/v1/computers/${encodeURIComponent(computer)}/stream`;
    const life: Record<string, string> = this.options.incarnation ? { [INCARNATION_HEADER]: this.options.incarnation } : {};
    if (this.options.repos) life[REPOS_HEADER] = reposHeader(this.options.repos);
    // A frozen board accepts the connection (its kernel does) and answers no upgrade: bounded like its silence.
    const socket = (this.options.connect ?? wsConnect)(url, {
      headers: { ...life, authorization: `Bearer ${token}` },
      maxPayload: MAX_FRAME_BYTES,
      ...(this.options.livenessMs === null ? {} : { handshakeTimeout: this.options.livenessMs ?? LIVENESS_MS }),
    });
    this.socket = socket;
    // A refusal of the upgrade itself (not a dropped connection): its status decides whether to retry.
    let refusedWith: number | null = null;
    socket.on('unexpected-response', (_request, response) => {
      // Final only when the board itself refused (its JSON `{detail: {error}}`): a proxy's 404 while the
      // board restarts behind it is retried like a dropped connection, or every computer would exit.
      const body: Buffer[] = [];
      let size = 0;
      const decide = () => {
        cancelWait();
        if (boardRefusal(response.statusCode ?? 0, Buffer.concat(body).toString('utf8'))) refusedWith = response.statusCode ?? null;
        else
          (this.options.log ?? stderrLog)(
            `the stream's upgrade at ${server} was answered ${response.statusCode} by something that is not a runledger board (a proxy?): trying again`,
          );
        socket.terminate();
      };
      const cancelWait = this.options.clock.after(2_000, decide);
      response.on('data', (chunk: Buffer) => {
        if (size < 4_096) body.push(chunk);
        size += chunk.length;
      });
      response.on('end', decide);
      response.on('error', decide);
    });
    // Frames are handled one at a time, in order: each input commits before the next is read.
    let chain = Promise.resolve();
    let opened = false;
    let stopWatching: () => void = () => undefined;
    // Why the socket was given up for silent, said with its close.
    let silent: string | null = null;
    socket.on('open', () => {
      opened = true;
      this.attempt = 0;
      if (this.options.livenessMs !== null) stopWatching = this.watchLiveness(socket, server, (why) => (silent = why));
      // Which board, when there are several to choose from.
      this.options.onState?.('connected', this.servers.urls.length > 1 ? `to ${server}` : undefined);
    });
    socket.on('message', (data) => {
      const raw = data.toString();
      chain = chain
        .then(() => this.options.onFrame(raw))
        .catch((error: unknown) => (this.options.log ?? stderrLog)(`a frame from ${server} could not be handled: ${messageOf(error)}`));
    });
    // A socket error (the board refused or went away) is followed by its close, told and retried below.
    socket.on('error', () => {
      // followed by its close
    });
    socket.on('close', (code, reason) => {
      stopWatching();
      if (this.socket === socket) this.socket = null;
      if (refusedWith !== null && !this.stopped) {
        this.stopped = true;
        this.options.onRefused?.(refusedWith);
        return;
      }
      this.options.onState?.('disconnected', silent ?? `${code}${reason.length ? ` ${reason.toString()}` : ''}`);
      if (code === CONNECTED_ELSEWHERE.code && !this.stopped) {
        this.stopped = true;
        this.options.onConnectedElsewhere?.(reason.toString() || 'computer_connected_elsewhere');
        return;
      }
      // The board went away or could not be reached: with several boards, the next is tried at once
      // after a drop, and after the backoff when it could not be reached either.
      this.servers.failed(server);
      if (!this.stopped) this.scheduleReconnect(opened && this.servers.urls.length > 1);
    });
  }

  /**
   * Pings the board a few times per `livenessMs` and gives the socket up (terminate: its close moves the
   * stream on) once the board has been silent that long. Silence is measured on this process's clock
   * from the board's last sign of life; a check that fires far later than asked means this process was
   * away (frozen, asleep), not the board: the board is given a full `livenessMs` again from then.
   * Returns what stops the checks.
   */
  private watchLiveness(socket: WebSocket, server: string, givenUp: (why: string) => void): () => void {
    const { clock } = this.options;
    const limit = this.options.livenessMs ?? LIVENESS_MS;
    const every = Math.max(50, Math.floor(limit / 3));
    let lastSign = clock.now();
    const sign = () => {
      lastSign = clock.now();
    };
    socket.on('pong', sign);
    socket.on('ping', sign);
    socket.on('message', sign);
    let cancel: () => void = () => undefined;
    const check = (armedAt: number) => {
      if (socket.readyState !== WebSocket.OPEN) return;
      const now = clock.now();
      if (now - armedAt > 2 * every) lastSign = now;
      if (now - lastSign > limit) {
        givenUp(`the board at ${server} answered nothing for ${Math.round((now - lastSign) / 1000)} s: taken for gone`);
        socket.terminate();
        return;
      }
      socket.ping();
      arm();
    };
    const arm = () => {
      const armedAt = clock.now();
      cancel = clock.after(every, () => check(armedAt));
    };
    arm();
    return () => cancel();
  }

  private scheduleReconnect(atOnce = false): void {
    const delay = atOnce ? 0 : fullJitterMs(this.attempt++, (this.options.random ?? Math.random)());
    this.cancelRetry = this.options.clock.after(delay, () => {
      this.cancelRetry = null;
      if (!this.stopped) this.connect();
    });
  }
}

/**
 * The board's own refusal of the upgrade (400 a bad id, 401 a token not this computer's, 403), with its
 * JSON reason: it holds for every retry. Anything else (a proxy's 404 or 502, a timeout, a rate limit)
 * may pass.
 */
const BoardRefusal = z.object({ detail: z.object({ error: z.string() }) });

function boardRefusal(status: number, body: string): boolean {
  if (status !== 400 && status !== 401 && status !== 403) return false;
  try {
    return BoardRefusal.safeParse(JSON.parse(body)).success;
  } catch (error) {
    // Not JSON: not the board's answer.
    if (error instanceof SyntaxError) return false;
    throw error;
  }
}
