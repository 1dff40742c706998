import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import * as z from 'zod';
import type { Answer, BoardHost } from '../../apps/board/boardHost.ts';
import { TimeoutSeconds } from '../../events/boardEvents.ts';
import { STREAM_NAME } from '../../events/envelope.ts';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';
import { SafeId } from '../../events/safeId.ts';
import { ChangesBody, changesFromWire } from '../../events/wire/changes.ts';
import { INCARNATION_HEADER } from '../../events/wire/incarnation.ts';
import { parseReposHeader, REPOS_HEADER } from '../../events/wire/repos.ts';
import { UsageBody, usageFromWire } from '../../events/wire/usage.ts';
import { BaseRef, type RepoAnnouncement, RepoName } from '../../events/workspace.ts';
import type { UsageTally } from '../../projections/usage.ts';
import { REPORT_LIMITS } from '../../runtime/store/computerEvents.ts';
import { StaleVersionError } from '../../runtime/store/eventStore.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import { CROSS_SITE, fromOwnOrigin, submitTokenOf } from './browserWrites.ts';
import { type ApiRequest, apiRequestOf, bearerOf, errorBody, HttpError, readJson, sendError, sendJson, type WithHeaders } from './http.ts';
import { addressedToLoopback, HOST_NOT_ALLOWED } from './loopbackHost.ts';
import { runListQueryOf } from './runListing.ts';

const TEXT = 4 * 1024 * 1024;
const BIG_BODY = 5 * 1024 * 1024;
const SMALL_BODY = 64 * 1024;

const SubmitBody = z.strictObject({
  lane: SafeId,
  prompt: z.string().min(1).max(TEXT),
  agent_id: SafeId.nullable().optional(),
  timeout_s: TimeoutSeconds.nullable().optional(),
  repo: RepoName.nullable().optional(),
  base: BaseRef.nullable().optional(),
});
const HeartbeatBody = z.strictObject({ progress: z.string().max(4096).optional() });
const ReplyBody = z.strictObject({ text: z.string().max(TEXT) });
const CompleteBody = z.strictObject({
  ok: z.boolean(),
  error: z.string().max(TEXT).optional(),
  usage: UsageBody.optional(),
  changes: ChangesBody.optional(),
});
const Empty = z.strictObject({});
/** A computer's report of its own events (see ComputerEvents): rows of its log, bounded (REPORT_LIMITS). */
const ReportBody = z.strictObject({
  events: z
    .array(
      z.strictObject({
        seq: z.number().int().positive(),
        stream: z.string().regex(STREAM_NAME),
        version: z.number().int().positive(),
        type: z.string().min(1).max(200),
        data: z.unknown(),
        at: z.number().int().nonnegative(),
        cause: z.number().int().positive().nullable(),
        actor: z.string().max(300),
      }),
    )
    .max(REPORT_LIMITS.batchEvents),
});

export interface ApiOptions {
  /** Reads need no token while the board listens on loopback only (docs/rules.md#tools). */
  readonly openReads: boolean;
  /**
   * Records a request refused at the edge (bad token, bad body, bad id). `anonymous`: its caller had
   * not proved a token, so it is counted rather than recorded on its own (docs/rules.md#the-log).
   */
  readonly rejected: (method: string, path: string, status: number, code: string, reason: string, anonymous: boolean) => void;
  /** The live status `runledger status` shows (queues, parked runs, claims). */
  readonly status?: () => unknown;
  /** Usage totals per login, exported by `/metrics` as counters. */
  readonly usage?: () => Record<string, UsageTally>;
}

const UNAUTHORIZED = new HttpError(401, 'unauthorized', 'a valid token is required');

/** What the API answers a request: a JSON body, a text (`/metrics`), or a refusal (its body is `errorBody`'s). */
export type ApiAnswer = Answer | { readonly text: string } | { readonly status: number; readonly body: unknown; readonly refusal: HttpError };

/** The daemon's life from `Runledger-Incarnation` (docs/rules.md#wire-and-cli): absent from older computers, checked when sent. */
function incarnationOf(request: WithHeaders): string | undefined {
  const value = request.headers[INCARNATION_HEADER];
  if (value === undefined) return undefined;
  if (!isSafeId(value)) {
    throw new HttpError(400, 'invalid_incarnation', `the Runledger-Incarnation header must match ${SAFE_ID_RULE}`);
  }
  return value;
}

/** The repositories a connecting computer announces (`Runledger-Repos`, docs/rules.md#workspaces): absent from older computers, checked when sent. */
function reposOf(request: IncomingMessage): RepoAnnouncement | undefined {
  const value = request.headers[REPOS_HEADER];
  if (value === undefined) return undefined;
  const repos = parseReposHeader(Array.isArray(value) ? value.join(',') : value);
  if ('error' in repos) throw new HttpError(400, 'invalid_repos', repos.error);
  return repos;
}

/**
 * The board's HTTP API (docs/rules.md#wire-and-cli, fixed): routes, tokens and body shapes are checked here, and
 * each good request becomes a board input. A refusal names what was wrong, never whose secret.
 */
export function boardApi(host: BoardHost, options: ApiOptions) {
  /** Requests whose caller proved a token: a refusal of theirs is recorded on its own. */
  const trusted = new WeakSet<ApiRequest>();
  const runId = (raw: string): string => {
    const id = idOf(raw);
    if (id === null)
      throw new HttpError(400, 'invalid_id', `the id ${JSON.stringify((safeDecode(raw) ?? raw).slice(0, 80))} does not match ${SAFE_ID_RULE}`);
    return id;
  };
  const submitter = async (request: ApiRequest) => {
    if (!(await host.acceptsSubmitToken(submitTokenOf(request)))) throw UNAUTHORIZED;
    trusted.add(request);
  };
  const runHolder = async (request: ApiRequest, id: string) => {
    const computerId = await host.runTokenHolder(id, bearerOf(request));
    if (computerId === null) throw UNAUTHORIZED;
    trusted.add(request);
    return computerId;
  };
  const computer = async (request: ApiRequest, computerId: string) => {
    if (!(await host.isComputerToken(computerId, bearerOf(request)))) throw UNAUTHORIZED;
    trusted.add(request);
  };

  const route = async (request: ApiRequest): Promise<Answer | { text: string }> => {
    const { method } = request;
    const path = request.url.split('?')[0]!;
    let m: RegExpMatchArray | null;
    if (options.openReads && !addressedToLoopback(request))
      throw new HttpError(HOST_NOT_ALLOWED.status, HOST_NOT_ALLOWED.code, HOST_NOT_ALLOWED.reason);
    // A browser's write from a page of another site is refused whatever it carries (see fromOwnOrigin).
    if (method !== 'GET' && method !== 'HEAD' && !fromOwnOrigin(request)) throw new HttpError(CROSS_SITE.status, CROSS_SITE.code, CROSS_SITE.reason);
    if (method === 'GET' && path === '/healthz') return { status: 200, body: { ok: true } };
    if (method === 'GET' && path === '/metrics') return { text: (await metrics(host)) + usageMetrics(options.usage?.() ?? {}) };
    if (method === 'GET' && path === '/v1/status' && options.status) {
      if (!options.openReads) await submitter(request);
      return { status: 200, body: options.status() };
    }
    if (method === 'GET' && path === '/v1/runs') {
      if (!options.openReads) await submitter(request);
      const params = new URL(request.url, 'http://board.invalid').searchParams;
      // The runs a prefix starts (docs/rules.md#tools: commands take a unique prefix of a run id).
      if (params.has('prefix')) return host.runsStartingWith(prefixOf(params));
      const query = runListQueryOf(params);
      if ('error' in query) throw new HttpError(400, 'invalid_query', query.error);
      return host.runs(query);
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/runs\/([^/]+)\/details$/))) {
      if (!options.openReads) await submitter(request);
      return host.details(runId(m[1]!));
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/runs\/([^/]+)\/audit$/))) {
      if (!options.openReads) await submitter(request);
      return host.timeline(runId(m[1]!));
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/runs\/([^/]+)\/diff$/))) {
      if (!options.openReads) await submitter(request);
      return host.diff(runId(m[1]!));
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/runs\/([^/]+)$/))) {
      if (!options.openReads) await submitter(request);
      return host.run(runId(m[1]!));
    }
    if (method === 'POST' && path === '/v1/runs') {
      await submitter(request);
      const body = await readJson(request, SubmitBody, BIG_BODY);
      const key = request.headers['idempotency-key'];
      if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 255)) {
        throw new HttpError(400, 'invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 characters');
      }
      return host.submit(body, key);
    }
    if (method === 'POST' && (m = path.match(/^\/v1\/runs\/([^/]+)\/cancel$/))) {
      await submitter(request);
      await readJson(request, Empty, SMALL_BODY);
      return host.cancel(runId(m[1]!));
    }
    if (method === 'POST' && (m = path.match(/^\/v1\/computers\/([^/]+)\/runs\/([^/]+)\/claim$/))) {
      const computerId = runId(m[1]!);
      await computer(request, computerId);
      const incarnation = incarnationOf(request);
      await readJson(request, Empty, SMALL_BODY);
      return host.claim(computerId, runId(m[2]!), incarnation);
    }
    if (method === 'POST' && (m = path.match(/^\/v1\/computers\/([^/]+)\/events$/))) {
      const computerId = runId(m[1]!);
      await computer(request, computerId);
      return host.report(computerId, (await readJson(request, ReportBody, REPORT_LIMITS.batchBytes)).events);
    }
    if (method === 'POST' && (m = path.match(/^\/v1\/runs\/([^/]+)\/(heartbeat|reply|complete)$/))) {
      const id = runId(m[1]!);
      const computerId = await runHolder(request, id);
      if (m[2] === 'heartbeat') {
        const { progress } = await readJson(request, HeartbeatBody, SMALL_BODY);
        return host.heartbeat(id, computerId, progress);
      }
      if (m[2] === 'reply') return host.reply(id, computerId, (await readJson(request, ReplyBody, BIG_BODY)).text);
      const body = await readJson(request, CompleteBody, BIG_BODY);
      return host.complete(id, computerId, body.ok, body.error, usageFromWire(body.usage), body.changes && changesFromWire(body.changes));
    }
    throw new HttpError(404, 'not_found', `no route ${method} ${path}`);
  };

  /** A request's answer, however it came: routed, or refused (and the refusal recorded). */
  const respond = async (request: ApiRequest): Promise<ApiAnswer> => {
    try {
      return await route(request);
    } catch (error) {
      const refusal = refusalOf(error);
      // The daemon's own log says which file and why; the client hears the cause, not the path.
      if (!(error instanceof HttpError) && !(error instanceof LogUnwritableError) && !(error instanceof StaleVersionError))
        process.emitWarning(`board request failed: ${(error instanceof Error ? error.stack : undefined) ?? error}`);
      // A failure of the board's own (5xx) is recorded whoever asked: it is not the caller's traffic.
      options.rejected(
        request.method,
        request.url.slice(0, 300),
        refusal.status,
        refusal.code,
        refusal.message,
        !trusted.has(request) && refusal.status < 500,
      );
      return { status: refusal.status, body: errorBody(refusal), refusal };
    }
  };

  return {
    respond,

    async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
      const answer = await respond(apiRequestOf(request));
      if ('text' in answer) {
        response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        response.end(answer.text);
      } else if ('refusal' in answer) {
        if (!request.complete) request.resume();
        if (answer.status === 413) closeOnceRead(request, response);
        sendError(response, answer.refusal);
      } else {
        sendJson(response, answer.status, answer.body);
      }
    },

    /** The push stream's upgrade: only for a computer with its own token. */
    async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
      const path = (request.url ?? '').slice(0, 300);
      const refuse = (status: number, code: string, reason: string, anonymous: boolean) => {
        options.rejected('GET', path, status, code, `push stream refused: ${reason}`, anonymous);
        const line = STATUS_LINES[status] ?? 'Bad Request';
        socket.end(
          `HTTP/1.1 ${status} ${line}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n${JSON.stringify({ detail: { error: code } })}`,
        );
      };
      if (options.openReads && !addressedToLoopback(request))
        return refuse(HOST_NOT_ALLOWED.status, HOST_NOT_ALLOWED.code, HOST_NOT_ALLOWED.reason, true);
      const m = (request.url ?? '').split('?')[0]!.match(/^\/v1\/computers\/([^/]+)\/stream$/);
      const computerId = m ? idOf(m[1]!) : null;
      if (m && computerId === null) return refuse(400, 'invalid_id', `the computer id does not match ${SAFE_ID_RULE}`, true);
      const ok = computerId !== null && (await host.isComputerToken(computerId, bearerOf(request)));
      if (!ok) return refuse(401, 'unauthorized', 'a valid computer token is required', true);
      let incarnation: string | undefined;
      let repos: RepoAnnouncement | undefined;
      try {
        incarnation = incarnationOf(request);
        repos = reposOf(request);
      } catch (error) {
        // incarnationOf and reposOf refuse a malformed header with an HttpError; anything else is a bug and goes up.
        if (!(error instanceof HttpError)) throw error;
        return refuse(error.status, error.code, error.message, false);
      }
      host.push.accept(request, socket, head, computerId!, incarnation ?? null, repos);
    },
  };
}

/**
 * A request decided CONFLICT_RETRIES + 1 times, each refused because another writer (a board on the same
 * PostgreSQL log, docs/rules.md#postgresql-board) committed first: nothing was recorded, and a moment later it goes through.
 * Its client retries a 5xx (the computer's claim and completion, docs/rules.md#wire-and-cli); 503 with a Retry-After says
 * when, and the code says why, unlike a 500.
 */
const CONTENDED = new HttpError(503, 'log_contended', 'other writers kept changing what this request decides on; nothing was recorded: try again', {
  'retry-after': '1',
});

/** What a failed request answers: its own refusal, 507 when the log cannot be written (docs/rules.md#the-log), 503 when contended, else 500. */
function refusalOf(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof LogUnwritableError) return new HttpError(507, 'log_unwritable', error.publicReason);
  if (error instanceof StaleVersionError) return CONTENDED;
  return new HttpError(500, 'internal', 'the board could not answer this request');
}

const STATUS_LINES: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden' };

/** How long a refused body may go on arriving after its 413 before the connection is cut. */
const LINGER_MS = 10_000;

/**
 * A body over its limit is answered at once, and the connection closed once the client has finished
 * writing it (or after LINGER_MS): closing while it still writes would reset the connection and could
 * lose the answer for a client that reads only once its body is written.
 */
function closeOnceRead(request: IncomingMessage, response: ServerResponse): void {
  // Not `Connection: close`: node would cut the connection as soon as the answer is written.
  const socket = request.socket;
  const cut = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(cut));
  const close = () => (response.writableFinished ? socket.end() : response.once('finish', () => socket.end()));
  if (request.complete) close();
  else request.once('end', close);
}

/** A path segment decoded, or null when its escapes are malformed (`%ZZ`): a bad id, never a crash. */
function safeDecode(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch (error) {
    if (error instanceof URIError) return null;
    throw error;
  }
}

/** `?prefix=P` of `GET /v1/runs`: the start of a run id, checked like an id; alone, as the list's filters do not apply to it. */
function prefixOf(params: URLSearchParams): string {
  const prefix = params.get('prefix');
  const others = [...params.keys()].filter((name) => name !== 'prefix');
  if (others.length > 0)
    throw new HttpError(
      400,
      'invalid_query',
      `GET /v1/runs?prefix= takes no other parameter: ${JSON.stringify(others[0]!.slice(0, 40))} is one too many`,
    );
  if (!isSafeId(prefix)) throw new HttpError(400, 'invalid_prefix', `GET /v1/runs wants ?prefix= the start of a run id, matching ${SAFE_ID_RULE}`);
  return prefix;
}

/** The id a path segment names, or null when it is not one (the id rule once decoded). */
function idOf(raw: string): string | null {
  const id = safeDecode(raw);
  return isSafeId(id) ? id : null;
}

async function metrics(host: BoardHost): Promise<string> {
  const counts = await host.counts();
  const lines = ['# HELP runledger_runs Runs on the board by state.', '# TYPE runledger_runs gauge'];
  for (const state of ['queued', 'claimed', 'running', 'succeeded', 'failed', 'cancelled', 'resolved']) {
    lines.push(`runledger_runs{state="${state}"} ${counts.runs[state] ?? 0}`);
  }
  lines.push('# HELP runledger_computers_connected Computers on the push stream.', '# TYPE runledger_computers_connected gauge');
  lines.push(`runledger_computers_connected ${counts.connected}`);
  lines.push('# HELP runledger_claims_open Claimed runs not yet terminal.', '# TYPE runledger_claims_open gauge');
  lines.push(`runledger_claims_open ${counts.open}`);
  return `${lines.join('\n')}\n`;
}

const USAGE_COUNTERS = [
  ['runs', 'runledger_usage_runs_total', 'Runs whose completion reported a usage, per agent login.'],
  ['costUsd', 'runledger_usage_cost_usd_total', 'Cost in USD the agents reported, per agent login.'],
  ['inputTokens', 'runledger_usage_input_tokens_total', 'Input tokens the agents reported, per agent login.'],
  ['outputTokens', 'runledger_usage_output_tokens_total', 'Output tokens the agents reported, per agent login.'],
  ['cachedInputTokens', 'runledger_usage_cached_input_tokens_total', 'Cached input tokens the agents reported, per agent login.'],
] as const;

/** Usage per login as Prometheus counters (they only grow: they are folded from the log since its start). */
export function usageMetrics(logins: Record<string, UsageTally>): string {
  const lines: string[] = [];
  for (const [field, name, help] of USAGE_COUNTERS) {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
    // Login ids follow the id rule (letters, digits, -): nothing in them needs escaping in a label.
    for (const [login, tally] of Object.entries(logins).sort(([a], [b]) => (a < b ? -1 : 1))) lines.push(`${name}{login="${login}"} ${tally[field]}`);
  }
  return `${lines.join('\n')}\n`;
}
