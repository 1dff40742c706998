import { resolve } from 'node:path';
import { isPostgresUrl, redactUrl } from '../../events/store/logLocation.ts';
import { messageOf } from '../../events/thrown.ts';
import { readSubmitToken, tokenPaths } from '../../wire/tokens.ts';
import { DEFAULT_DB } from './options.ts';

export interface ClientOptions {
  server: string;
  token?: string;
  db: string;
  json?: boolean;
}

/** One call to the board's API with the submit token; a refusal becomes an error that says why. */
export async function boardCall(options: ClientOptions, method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}) {
  const token = method === 'GET' && !options.token ? null : submitToken(options);
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
  if (response.status === 401) throw new Error(tokenRefused(options, token));
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

/** `--token` (or `RUNLEDGER_TOKEN`), else the token file beside a SQLite board's log; a board on PostgreSQL has none (SPEC 8). */
function submitToken(options: ClientOptions): string {
  const db = options.db ?? DEFAULT_DB;
  if (!options.token && isPostgresUrl(db)) {
    throw new Error(
      `a board on PostgreSQL (--db ${redactUrl(db)}) keeps no token file: pass --token T or set RUNLEDGER_TOKEN (\`runledger token add NAME --db URL\` makes one)`,
    );
  }
  return readSubmitToken(db, options.token);
}

/** A 401 says which token was sent, from where, and what to do: a token file of another board's folder is the usual cause. */
export function tokenRefused(options: ClientOptions, token: string | null): string {
  const board = `the board at ${options.server}`;
  if (token === null)
    return `${board} wants a token even for reads (it listens beyond loopback): pass --token, or --db with the log of that board (its folder holds the token)`;
  if (options.token)
    return `${board} refused the submit token given with --token or RUNLEDGER_TOKEN (401): pass the one in the \`token\` file beside that board's log, or one \`runledger token add\` made for it`;
  const file = tokenPaths(resolve(options.db ?? DEFAULT_DB)).submitToken;
  return (
    `${board} refused the submit token read from ${file} (401): that file is the token of the board whose log is ${resolve(options.db ?? DEFAULT_DB)}; ` +
    'give --db the log of the board at --server (its folder holds its token), or --token'
  );
}

export function refusal(status: number, body: unknown): string {
  const detail = (body as { detail?: { error?: string; message?: string } } | undefined)?.detail;
  return `the board answered ${status}${detail?.error ? ` ${detail.error}` : ''}${detail?.message && detail.message !== detail.error ? `: ${detail.message}` : ''}`;
}
