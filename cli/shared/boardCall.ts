import { resolve } from 'node:path';
import { type HttpReply, httpCall } from '../../adapters/http/httpCall.ts';
import { readSubmitToken, tokenPaths } from '../../adapters/http/tokens.ts';
import { messageOf } from '../../events/thrown.ts';
import { isPostgresUrl, redactUrl } from '../../runtime/store/logLocation.ts';
import { howChosen } from './options.ts';

export interface ClientOptions {
  server: string;
  token?: string;
  db: string;
  /** How `db` was chosen (set with it: ./options.ts withLog). */
  dbHow?: string;
  json?: boolean;
}

/** A board's answer to one call: its status and body, and how many times the call was sent. */
export interface BoardAnswer {
  readonly status: number;
  readonly body: Record<string, unknown> | undefined;
  readonly tries: number;
}

/** How often a call the board answered `503 log_contended` is sent in all, and the longest wait its `Retry-After` may ask. */
const CONTENDED_TRIES = 5;
const CONTENDED_WAIT_MAX_S = 5;

/** How long a call may take in all, its answer read whole. */
const ANSWER_WITHIN_MS = 15_000;

/**
 * One call to the board's API with the submit token; a refusal becomes an error that says why. A
 * `503 log_contended` (other boards of its log kept changing what the call decides on) recorded
 * nothing, so the same call is sent again after the `Retry-After` the board asked, a few times: a
 * POST's idempotency key, if any, goes with it each time. Any other answer is the caller's.
 */
export async function boardCall(
  options: ClientOptions,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<BoardAnswer> {
  const token = method === 'GET' && !options.token ? null : submitToken(options);
  for (let tries = 1; ; tries++) {
    const { answer, retryAfterS } = await callOnce(options, token, method, path, body, headers);
    if (!isContended(answer) || tries === CONTENDED_TRIES) return { ...answer, tries };
    await new Promise((resolve) => setTimeout(resolve, Math.min(retryAfterS, CONTENDED_WAIT_MAX_S) * 1000));
  }
}

function isContended(answer: { status: number; body: Record<string, unknown> | undefined }): boolean {
  return answer.status === 503 && (answer.body?.detail as { error?: unknown } | undefined)?.error === 'log_contended';
}

async function callOnce(
  options: ClientOptions,
  token: string | null,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ answer: Omit<BoardAnswer, 'tries'>; retryAfterS: number }> {
  let reply: HttpReply;
  try {
    reply = await httpCall(`${options.server}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      cutBy: [AbortSignal.timeout(ANSWER_WITHIN_MS)],
    });
  } catch (error) {
    throw new Error(
      `the board at ${options.server} did not answer (${messageOf(error)}): is \`runledger daemon\` running? (--server or RUNLEDGER_SERVER sets another address)`,
    );
  }
  if (reply.status === 401) throw new Error(tokenRefused(options, token));
  const location = reply.headers.location;
  if (reply.status >= 300 && reply.status < 400 && location !== undefined) throw new Error(redirected(options, reply.status, location));
  let parsed: unknown;
  try {
    parsed = reply.text ? JSON.parse(reply.text) : undefined;
  } catch {
    // Not JSON (a proxy's error page, a board too old): the text is shown as it came.
    parsed = reply.text;
  }
  // Seconds (the board sends 1); a date or nothing is taken as the board's own 1.
  const retryAfter = Number(reply.headers['retry-after'] ?? Number.NaN);
  return {
    answer: { status: reply.status, body: parsed as Record<string, unknown> | undefined },
    retryAfterS: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : 1,
  };
}

/**
 * `--token` (or `RUNLEDGER_TOKEN`), else the token file beside a SQLite board's log; a board on
 * PostgreSQL has none. A missing file is named with how its log was chosen: a command run with
 * another home than the daemon's looks in another folder.
 */
function submitToken(options: ClientOptions): string {
  if (options.token) return options.token;
  const { db } = options;
  if (isPostgresUrl(db)) {
    throw new Error(
      `a board on PostgreSQL (--db ${redactUrl(db)}) keeps no token file: pass --token T or set RUNLEDGER_TOKEN (\`runledger token add NAME --db URL\` makes one)`,
    );
  }
  return readSubmitToken(db, undefined, howChosen(options));
}

/** A 401 says which token was sent, from where, and what to do: a token file of another board's folder is the usual cause. */
export function tokenRefused(options: ClientOptions, token: string | null): string {
  const board = `the board at ${options.server}`;
  if (token === null)
    return `${board} wants a token even for reads (it listens beyond loopback): pass --token, or --db with the log of that board (its folder holds the token)`;
  if (options.token)
    return `${board} refused the submit token given with --token or RUNLEDGER_TOKEN (401): pass the one in the \`token\` file beside that board's log, or one \`runledger token add\` made for it`;
  const file = tokenPaths(resolve(options.db)).submitToken;
  return (
    `${board} refused the submit token read from ${file} (401): that file is the token of the board whose log is ${resolve(options.db)} , ${howChosen(options)}); ` +
    'give --db the log of the board at --server (its folder holds its token), or --token'
  );
}

/**
 * The board's API sends nowhere else: a redirect comes from something before it (a proxy moving
 * http: to https:), and following it would send the token where the user did not aim it.
 */
function redirected(options: ClientOptions, status: number, location: string): string {
  return `the board at ${options.server} answered ${status}, sending the call to ${location}: give --server (or RUNLEDGER_SERVER) the board's own address`;
}

export function refusal({ status, body, tries }: BoardAnswer): string {
  const detail = (body as { detail?: { error?: string; message?: string } } | undefined)?.detail;
  const said = `the board answered ${status}${detail?.error ? ` ${detail.error}` : ''}${detail?.message && detail.message !== detail.error ? `: ${detail.message}` : ''}`;
  return tries > 1 ? `${said} (${tries} tries)` : said;
}
