import type { Agent as HttpAgent, IncomingHttpHeaders } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { http, https } from '../../runtime/lazyBuiltins.ts';

/** One HTTP request as a caller of the board sends it. */
export interface HttpCall {
  readonly method: 'GET' | 'POST';
  /** Names in lower case; `content-length` is added for a payload. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body, if any. */
  readonly payload?: string;
  /**
   * The keep-alive agents to send it on, one per scheme. None: a connection of its own, closed once
   * the answer is read, so nothing is left open to hold a short-lived process (the CLI) or to be
   * reused after the board's keep-alive timeout closed it.
   */
  readonly agents?: { readonly http: HttpAgent; readonly https: HttpsAgent };
  /** Each ends the call when it is aborted: the call rejects with its reason (a deadline's words). */
  readonly cutBy: readonly AbortSignal[];
}

/** An answer read whole. */
export interface HttpReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/**
 * One request with Node's own client (http: or https:, by the URL), its answer read whole. Rejects
 * with what stopped it: a network error, an answer cut half way, or the reason of a `cutBy` signal.
 * Redirects are answers like any other: the board's API makes none, and following one would send a
 * token where the caller did not aim it. Node's client rather than `fetch`: fetch loads undici on its
 * first call, ~0.25 s of CPU with its WebAssembly parser compiled (0.57 s a `runledger submit` with it,
 * 0.32 s without), and costs more CPU a call after.
 */
export function httpCall(url: string, call: HttpCall): Promise<HttpReply> {
  return new Promise<HttpReply>((resolve, reject) => {
    const spent = call.cutBy.find((signal) => signal.aborted);
    if (spent) return reject(spent.reason);
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    const request = (secure ? https() : http()).request(target, {
      method: call.method,
      agent: call.agents ? (secure ? call.agents.https : call.agents.http) : false,
      headers: call.payload === undefined ? call.headers : { ...call.headers, 'content-length': Buffer.byteLength(call.payload) },
    });
    const settled = () => {
      for (const signal of call.cutBy) signal.removeEventListener('abort', cut);
    };
    // Rejected with the signal's own reason before the socket is destroyed: the error of the answer
    // that destroying may cut half way would say less.
    const cut = (event: Event) => {
      settled();
      reject((event.target as AbortSignal).reason);
      request.destroy();
    };
    const failed = (error: Error) => {
      settled();
      reject(error);
    };
    for (const signal of call.cutBy) signal.addEventListener('abort', cut, { once: true });
    request.on('error', failed);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', failed);
      response.on('end', () => {
        settled();
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    request.end(call.payload);
  });
}
