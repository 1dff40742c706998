import { type BoardTransport, parseOrUndefined } from './boardClient.ts';
import { type ApiRequest, bodyTooLarge } from './http.ts';
import type { ApiAnswer } from './httpApi.ts';

/**
 * A computer's calls to the board of its own process (`runledger daemon`), handed to the board's API
 * handler without a socket: the same routes, tokens, body checks and refusals (recorded alike) as a
 * call over HTTP, and the same answers, given when the board has committed what the call decided. What
 * it saves is HTTP itself: a request written, parsed and answered on loopback took ~1.5 ms of the
 * daemon's CPU a run (bench/profileEmbedded.ts). `url`: where the board listens (the `Host` an HTTP
 * client of it would send).
 */
export function localTransport(respond: (request: ApiRequest) => Promise<ApiAnswer>, url: string): BoardTransport {
  const host = new URL(url).host;
  return {
    send: (call, deadline) =>
      new Promise((resolve) => {
        // The deadline ends the call as it ends one over HTTP; the board goes on with what it was asked.
        const cut = () => resolve({ status: 0 });
        deadline.addEventListener('abort', cut, { once: true });
        const request: ApiRequest = {
          method: 'POST',
          url: call.path,
          headers: { ...call.headers, host },
          body: async (limit) => {
            if (Buffer.byteLength(call.payload) > limit) throw bodyTooLarge(limit);
            return call.payload;
          },
        };
        respond(request).then(
          (answer) => {
            deadline.removeEventListener('abort', cut);
            resolve({ status: 'text' in answer ? 200 : answer.status, body: 'text' in answer ? parseOrUndefined(answer.text) : copied(answer.body) });
          },
          () => resolve({ status: 0 }),
        );
      }),
    close: () => {
      // No connection to close.
    },
  };
}

/** The body as a client over HTTP gets it: a copy of its own through JSON, never an object the board holds. */
function copied(body: unknown): unknown {
  const text = JSON.stringify(body);
  return text === undefined ? undefined : JSON.parse(text);
}
