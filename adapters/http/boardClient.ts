import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { ChangesBody } from '../../events/wire/changes.ts';
import { INCARNATION_HEADER } from '../../events/wire/incarnation.ts';
import type { UsageBody } from '../../events/wire/usage.ts';
import { BoardServers } from './boardServers.ts';

/**
 * The computer's HTTP calls to the board (docs/rules.md#wire-and-cli). Every answer comes back as a status and a
 * parsed body, never as a throw: status 0 is a network error, for the deciders to classify.
 */
export interface BoardAnswer {
  readonly status: number;
  readonly body?: unknown;
}

export class BoardClient {
  private readonly servers: BoardServers;
  private readonly agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

  /** `server`: one board, or the boards of one log (`BoardServers`): each call goes to the current one. */
  constructor(
    server: string | BoardServers,
    private readonly computer: string,
    private readonly computerToken: string,
    private readonly timeoutMs = 15_000,
  ) {
    this.servers = typeof server === 'string' ? new BoardServers([server]) : server;
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

  /**
   * Node's own client on a keep-alive agent rather than `fetch`: a computer makes several calls a run,
   * and fetch's web-streams machinery cost more CPU a call than the board took to answer it.
   */
  private post(path: string, token: string, body: unknown, extraHeaders: Record<string, string> = {}): Promise<BoardAnswer> {
    const payload = JSON.stringify(body);
    return new Promise<BoardAnswer>((resolveOnce) => {
      let deadline: NodeJS.Timeout | undefined;
      const resolve = (answer: BoardAnswer) => {
        clearTimeout(deadline);
        resolveOnce(answer);
      };
      const board = this.servers.current();
      const url = new URL(`${board}${path}`);
      const secure = url.protocol === 'https:';
      const request = (secure ? httpsRequest : httpRequest)(
        url,
        {
          method: 'POST',
          agent: secure ? this.agents.https : this.agents.http,
          // Left for another board meanwhile: ended as a network error, which every caller retries.
          signal: this.servers.signalOf(board),
          headers: {
            ...extraHeaders,
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', () => resolve({ status: 0 }));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: parseOrUndefined(Buffer.concat(chunks).toString('utf8')) }));
        },
      );
      // The socket's own timeout only measures silence: this one bounds the whole call, so a board
      // (or a proxy) that trickles an answer cannot hold a claim, and a drain waiting for it, forever.
      deadline = setTimeout(() => request.destroy(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      request.on('error', () => resolve({ status: 0 }));
      request.end(payload);
    });
  }

  /** Closes the idle keep-alive connections, so a stopping daemon leaves no socket open. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

function parseOrUndefined(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON (a proxy's error page): the answer is its status alone.
    return undefined;
  }
}
