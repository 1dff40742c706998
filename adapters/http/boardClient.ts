import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { ChangesBody } from '../../events/wire/changes.ts';
import { INCARNATION_HEADER } from '../../events/wire/incarnation.ts';
import type { UsageBody } from '../../events/wire/usage.ts';
import { BoardServers } from './boardServers.ts';
import { httpCall } from './httpCall.ts';

/**
 * The computer's HTTP calls to the board (docs/rules.md#wire-and-cli). Every answer comes back as a status and a
 * parsed body, never as a throw: status 0 is a network error, for the deciders to classify.
 */
export interface BoardAnswer {
  readonly status: number;
  readonly body?: unknown;
}

/** A computer's call as it goes to the board whatever way: its path, its headers (names in lower case), its JSON body. */
export interface BoardCall {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: string;
}

/**
 * How a call reaches the board: over HTTP (`HttpTransport`), or straight to the API's handler when
 * the board is in this very process (the board server's `local`). Resolves, never rejects: status 0
 * for a call that did not get through, or was cut by `signal` (the client's deadline).
 */
export interface BoardTransport {
  send(call: BoardCall, signal: AbortSignal): Promise<BoardAnswer>;
  /** Lets go of what it holds open (idle connections), so a stopping daemon leaves no socket open. */
  close(): void;
}

export class BoardClient {
  private readonly transport: BoardTransport;

  /**
   * `board`: one board's URL, or the boards of one log (`BoardServers`): each call goes over HTTP to
   * the current one; or a transport of its own (the board of this process).
   */
  constructor(
    board: string | BoardServers | BoardTransport,
    private readonly computer: string,
    private readonly computerToken: string,
    private readonly timeoutMs = 15_000,
  ) {
    this.transport =
      typeof board === 'string' ? new HttpTransport(new BoardServers([board])) : board instanceof BoardServers ? new HttpTransport(board) : board;
  }

  /**
   * `incarnation`: the life of the daemon that started the claim (docs/rules.md#wire-and-cli): the board grants a
   * run to one life only, so a twin with the same id and token is told `claimed_elsewhere`.
   */
  claim(runId: string, incarnation?: string): Promise<BoardAnswer> {
    const life: Record<string, string> = incarnation ? { [INCARNATION_HEADER]: incarnation } : {};
    return this.post(`/v1/computers/${encodeURIComponent(this.computer)}/runs/${encodeURIComponent(runId)}/claim`, this.computerToken, {}, life);
  }

  heartbeat(runId: string, runToken: string, progress?: string): Promise<BoardAnswer> {
    return this.post(`/v1/runs/${encodeURIComponent(runId)}/heartbeat`, runToken, progress ? { progress } : {});
  }

  reply(runId: string, runToken: string, text: string): Promise<BoardAnswer> {
    return this.post(`/v1/runs/${encodeURIComponent(runId)}/reply`, runToken, { text });
  }

  /** `usage` and `changes` go only when there is one: a board that predates them refuses the field. */
  complete(
    runId: string,
    runToken: string,
    result: { ok: boolean; error?: string },
    usage?: UsageBody | null,
    changes?: ChangesBody | null,
  ): Promise<BoardAnswer> {
    return this.post(`/v1/runs/${encodeURIComponent(runId)}/complete`, runToken, {
      ...result,
      ...(usage ? { usage } : {}),
      ...(changes ? { changes } : {}),
    });
  }

  /** A batch of this computer's own events for the board's copy (`POST /v1/computers/{id}/events`): answered `{through}`. */
  report(events: readonly unknown[]): Promise<BoardAnswer> {
    return this.post(`/v1/computers/${encodeURIComponent(this.computer)}/events`, this.computerToken, { events });
  }

  private async post(path: string, token: string, body: unknown, extraHeaders: Record<string, string> = {}): Promise<BoardAnswer> {
    const call = {
      path,
      headers: { ...extraHeaders, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    };
    // Bounds the whole call, not only its silence: a board (or a proxy) that trickles an answer cannot
    // hold a claim, and a drain waiting for it, forever.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    try {
      return await this.transport.send(call, deadline.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the idle keep-alive connections, so a stopping daemon leaves no socket open. */
  close(): void {
    this.transport.close();
  }
}

/**
 * The calls over HTTP, to the current board of `servers`. Node's own client on a keep-alive agent
 * rather than `fetch`: a computer makes several calls a run, and fetch's web-streams machinery cost
 * more CPU a call than the board took to answer it.
 */
class HttpTransport implements BoardTransport {
  private readonly agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

  constructor(private readonly servers: BoardServers) {}

  async send(call: BoardCall, deadline: AbortSignal): Promise<BoardAnswer> {
    const board = this.servers.current();
    try {
      const reply = await httpCall(`${board}${call.path}`, {
        method: 'POST',
        headers: call.headers,
        payload: call.payload,
        agents: this.agents,
        // Left for another board meanwhile: ended as a network error, which every caller retries.
        cutBy: [deadline, this.servers.signalOf(board)],
      });
      return { status: reply.status, body: parseOrUndefined(reply.text) };
    } catch {
      return { status: 0 };
    }
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

/** An answer's body: JSON, or undefined when there is none or it is not JSON. */
export function parseOrUndefined(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON (a proxy's error page): the answer is its status alone.
    return undefined;
  }
}
