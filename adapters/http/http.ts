import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';

/** An answer that is not 2xx, with the machine-readable code of docs/rules.md#wire-and-cli (`{detail: {error}}`). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string = code,
    /** Headers the answer carries besides its body (a 503's `Retry-After`). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export const MAX_BODY_BYTES = 1024 * 1024;

/** What the checks of a request read: its headers (Node's, names in lower case). */
export type WithHeaders = Pick<IncomingMessage, 'headers'>;

/**
 * A request as the board's API reads it, however it came: over HTTP (`apiRequestOf`), or a call of a
 * computer in the board's own process (the board server's `local`). Both are answered by one handler.
 */
export interface ApiRequest extends WithHeaders {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** Its body as text, refused 413 (`bodyTooLarge`) the moment it passes `limit` bytes. */
  body(limit: number): Promise<string>;
}

/** An HTTP request as the API reads it: its body read from the socket when asked for. */
export function apiRequestOf(request: IncomingMessage): ApiRequest {
  return {
    method: request.method ?? 'GET',
    url: request.url ?? '/',
    headers: request.headers,
    body: async (limit) => (await readBody(request, limit)).toString('utf8'),
  };
}

/** The refusal of a body over `limit` bytes, whichever way it came. */
export function bodyTooLarge(limit: number): HttpError {
  return new HttpError(413, 'body_too_large', `the body is over ${limit} bytes`);
}

/** The request's JSON body, refused (413/400/422) when too large, not JSON, or not of `schema`'s shape. */
export async function readJson<S extends z.ZodType>(request: Pick<ApiRequest, 'body'>, schema: S, limit = MAX_BODY_BYTES): Promise<z.output<S>> {
  const text = await request.body(limit);
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    // A SyntaxError, JSON.parse's only failure on text: the caller's to fix.
    throw new HttpError(400, 'malformed_json', 'the body is not JSON');
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'body';
    throw new HttpError(422, 'invalid_body', `${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/**
 * The body, refused 413 the moment it passes `limit`. The rest is still read and dropped, not left in
 * the socket: a client that writes its whole body before it reads gets to the answer.
 */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      if (size > limit) return;
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else {
        chunks.length = 0;
        reject(bodyTooLarge(limit));
      }
    });
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

export function sendError(response: ServerResponse, error: HttpError): void {
  sendJson(response, error.status, errorBody(error), error.headers);
}

/** The body of a refusal (docs/rules.md#wire-and-cli): its code, and what was wrong in words. */
export function errorBody(error: HttpError): { detail: { error: string; message: string } } {
  return { detail: { error: error.code, message: error.message } };
}

export function bearerOf(request: WithHeaders): string | null {
  const header = request.headers.authorization;
  if (!header?.startsWith('Bearer ')) return null;
  return header.slice('Bearer '.length).trim() || null;
}
