import { type Agent, request } from 'node:http';

export type HttpCall = (
  url: string,
  method: 'GET' | 'POST',
  headers?: Record<string, string>,
  body?: string,
) => Promise<{ status: number; text: string }>;

/**
 * The benches' HTTP client on a keep-alive agent of the caller's (node:http rather than fetch: at
 * thousands of calls a second, fetch's own CPU would be counted against the board's). The answer's
 * status and text, whatever the status; a network error rejects.
 */
export function callWith(agent: Agent): HttpCall {
  return (url, method, headers = {}, body) =>
    new Promise((resolve, reject) => {
      const req = request(
        url,
        { method, agent, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
