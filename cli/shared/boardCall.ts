import { messageOf } from '../../events/thrown.ts';
import { readSubmitToken } from '../../wire/tokens.ts';
import { DEFAULT_DB } from './options.ts';

export interface ClientOptions {
  server: string;
  token?: string;
  db: string;
  json?: boolean;
}

/** One call to the board's API with the submit token; a refusal becomes an error that says why. */
export async function boardCall(options: ClientOptions, method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}) {
  const token = method === 'GET' && !options.token ? null : readSubmitToken(options.db ?? DEFAULT_DB, options.token);
  let response: Response;
  try {
    response = await fetch(`${options.server}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    throw new Error(
      `the board at ${options.server} did not answer (${messageOf(error)}): is \`runledger daemon\` running? (--server sets another address)`,
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON (a proxy's error page, a board too old): the text is shown as it came.
    parsed = text;
  }
  return { status: response.status, body: parsed as Record<string, unknown> | undefined };
}

export function refusal(status: number, body: unknown): string {
  const detail = (body as { detail?: { error?: string; message?: string } } | undefined)?.detail;
  return `the board answered ${status}${detail?.error ? ` ${detail.error}` : ''}${detail?.message && detail.message !== detail.error ? `: ${detail.message}` : ''}`;
}
