import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';

/** An answer that is not 2xx, with the machine-readable code of SPEC section 7 (`{detail: {error}}`). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string = code,
  ) {
    super(message);
  }
}

export const MAX_BODY_BYTES = 1024 * 1024;

/** The request's JSON body, refused (413/400/422) when too large, not JSON, or not of `schema`'s shape. */
export async function readJson<S extends z.ZodType>(request: IncomingMessage, schema: S, limit = MAX_BODY_BYTES): Promise<z.output<S>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, 'body_too_large', `the body is over ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
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

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

export function sendError(response: ServerResponse, error: HttpError): void {
  sendJson(response, error.status, { detail: { error: error.code, message: error.message } });
}

export function bearerOf(request: IncomingMessage): string | null {
  const header = request.headers.authorization;
  if (!header?.startsWith('Bearer ')) return null;
  return header.slice('Bearer '.length).trim() || null;
}
