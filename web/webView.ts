import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { interval, map, merge, type Observable } from 'rxjs';
import * as z from 'zod';
import type { BoardState } from '../actors/board/boardState.ts';
import type { QueueState } from '../actors/lane/queueState.ts';
import { CROSS_SITE, fromOwnOrigin, SIGNED_OUT_COOKIE, tokenCookie } from '../adapters/http/browserWrites.ts';
import { apiRequestOf, HttpError, readJson, sendJson } from '../adapters/http/http.ts';
import { addressedToLoopback, HOST_NOT_ALLOWED } from '../adapters/http/loopbackHost.ts';
import type { WebAccess, WebRoutes } from '../apps/board/boardServer.ts';
import type { DomainEvent } from '../events/catalog.ts';
import { isSafeId, SAFE_ID_RULE } from '../events/idRule.ts';
import { messageOf } from '../events/thrown.ts';
import { idsStartingWith, LOOKUP_LIMIT, noRunStartsWith, RunIdPrefixError, resolveRunId } from '../projections/audit/runIdPrefix.ts';
import type { CloseState } from '../projections/close.ts';
import type { UsageState } from '../projections/usage.ts';
import type { Clock } from '../runtime/actors/clock.ts';
import { type FailureLog, stderrLog } from '../runtime/actors/untilRecorded.ts';
import { historyPage, historyQueryOf } from '../runtime/audit/runHistory.ts';
import { type ComputerEvents, withComputerEvents } from '../runtime/store/computerEvents.ts';
import type { EventStore, OpenedLog } from '../runtime/store/eventStore.ts';
import { boardSnapshot, runFacts, WAIT_WARN_MS } from './boardSnapshot.ts';
import { laneTurns } from './laneTurns.ts';
import { LiveFeed } from './liveFeed.ts';
import { LiveHub, type LiveTarget } from './liveHub.ts';
import { ReportedFolds } from './reportedFolds.ts';
import { ViewerAccess } from './webAccess.ts';

export interface WebViewOptions {
  readonly store: OpenedLog;
  readonly clock: Clock;
  /**
   * The live projections (the daemon's ProjectionKeeper): read at once, never kept; the live pages
   * follow the events they have folded (`folds`), so what a page is sent is read after them.
   */
  readonly projections: { state<S>(name: string): S; readonly folds: Observable<DomainEvent> };
  /** The daemon's log (stderr when not given): a live page the board could not serve. */
  readonly log?: FailureLog;
  /**
   * When a run next in its lane that waits for a computer is called out on the board page (ms):
   * WAIT_WARN_MS unless given, or set in seconds by RUNLEDGER_WAIT_WARN_S.
   */
  readonly waitWarnMs?: number;
  /** The events computers with logs of their own reported, kept apart from the log: their half of each run, their queues and sessions. */
  readonly reported?: ComputerEvents | null;
  /** Reads `reported` this often too (boards sharing a PostgreSQL log: a computer reports to one of them); only when told of a report otherwise. */
  readonly reportedPollMs?: number;
  /** How often each live page must show it keeps up, or be dropped (ms; tests make it short). */
  readonly liveCheckMs?: number;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

// The pages load only their own files and talk only to their own origin (the live socket included).
const HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

const LIVE_PATH = '/v1/live';
/** The history of finished runs as JSON, for the history page: a read of the log, not of the board's state. */
const HISTORY_DATA = '/history/runs';
const RUN_PAGE = /^\/runs\/([^/]+)$/;
const LANE_PAGE = /^\/lanes\/([^/]+)$/;

/** The files of `static/`, read once: served as they are, by name, and nothing else from the disk. */
function staticFiles(): Map<string, { type: string; body: Buffer }> {
  const folder = new URL('./static/', import.meta.url);
  const files = new Map<string, { type: string; body: Buffer }>();
  for (const name of readdirSync(folder)) {
    const type = TYPES[name.slice(name.lastIndexOf('.'))];
    if (type) files.set(name, { type, body: readFileSync(new URL(name, folder)) });
  }
  return files;
}

/**
 * The web view, served beside the API on the board's port: `/` (lanes, claims, sessions, computers),
 * `/runs/{id}` (a run's timeline; a unique prefix of the id leads there), `/lanes/{lane}` (a lane's
 * conversation, turn by turn) and `/static/*`,
 * plus the live socket `/v1/live` the pages follow the log on. Reads follow the API's rule (see ViewerAccess).
 */
export function webView(options: WebViewOptions): (access: WebAccess) => WebRoutes {
  return (access) => {
    const viewers = new ViewerAccess(access);
    const files = staticFiles();
    const { projections, clock } = options;
    const waitWarnMs = options.waitWarnMs ?? waitWarnFromEnv() ?? WAIT_WARN_MS;
    const becameNext = new Map<string, number>();
    const reported = options.reported ?? null;
    const kept =
      access.reports && options.reportedPollMs ? merge(access.reports, interval(options.reportedPollMs).pipe(map(() => undefined))) : access.reports;
    const folds = reported && kept ? new ReportedFolds(reported, kept, options.log ?? stderrLog) : null;
    const entities = withComputerEvents(options.store, reported);
    const hub = new LiveHub({
      store: options.store,
      // The computers' reported events are heard as the log's are (their fold is read by the snapshot).
      feed: new LiveFeed(folds ? merge(projections.folds, folds.folded) : projections.folds),
      snapshot: () =>
        boardSnapshot(
          {
            board: projections.state<BoardState>('board'),
            // A computer with a log of its own is folded from its reports; one sharing the board's file, from the log.
            queues: { ...folds?.states().queues, ...projections.state<Record<string, QueueState>>('queue') },
            laneSessions: { ...folds?.states().laneSessions, ...projections.state<Record<string, Record<string, string>>>('lane-sessions') },
            usage: projections.state<UsageState>('usage'),
            closes: { ...folds?.states().closes, ...projections.state<CloseState>('close') },
          },
          clock.now(),
          { waitWarnMs, becameNext },
        ),
      runFacts: (runId, events) => runFacts(projections.state<BoardState>('board'), runId, events),
      log: options.log ?? stderrLog,
      ...(reported ? { reported } : {}),
      ...(options.liveCheckMs !== undefined ? { liveCheckMs: options.liveCheckMs } : {}),
      ...(access.progress ? { progress: access.progress } : {}),
      ...(access.listRuns ? { laneTurns: (lane: string) => laneTurns(access.listRuns!, lane) } : {}),
    });

    const pageOf = (path: string): string | null => {
      if (path === '/') return 'index.html';
      if (path === '/history') return 'history.html';
      if (path === HISTORY_DATA) return HISTORY_DATA;
      if (RUN_PAGE.test(path)) return 'run.html';
      if (LANE_PAGE.test(path)) return 'lane.html';
      if (path.startsWith('/static/')) return path.slice('/static/'.length);
      return null;
    };

    return {
      handles(request) {
        const path = urlOf(request).pathname;
        if (path === SESSION_PATH) return true;
        if (request.method !== 'GET' && request.method !== 'HEAD') return false;
        return path === '/favicon.ico' || pageOf(path) !== null;
      },

      handle(request, response) {
        const url = urlOf(request);
        if (url.pathname === SESSION_PATH) {
          void signIn(viewers, request, response);
          return;
        }
        if (url.pathname === '/favicon.ico') {
          response.writeHead(301, { location: '/static/favicon.svg' }).end();
          return;
        }
        const page = pageOf(url.pathname)!;
        // The page files are the repository's own, secret to no one: a refusal page can be styled.
        if (url.pathname.startsWith('/static/')) {
          const file = files.get(page);
          if (file) sendPage(response, 200, file, request.method === 'HEAD');
          else sendPage(response, 404, htmlPage(refusalPage('There is no such file here.')), request.method === 'HEAD');
          return;
        }
        const traded = viewers.trade(url);
        if (traded) {
          response.writeHead(303, { location: traded.location, 'set-cookie': traded.cookie, ...HEADERS }).end();
          return;
        }
        const verdict = viewers.check(request, url);
        if (!verdict.ok) {
          viewers.rejected(request, verdict);
          // Asked for the token (401): the page's own sign-in form, which trades it for the cookie and reloads.
          const more =
            verdict.status === 401 ? '<div id="sign-in-box" class="send-box"></div><script type="module" src="/static/signin.js"></script>' : '';
          sendPage(response, verdict.status, htmlPage(refusalPage(verdict.reason, more)), request.method === 'HEAD');
          return;
        }
        if (url.pathname === HISTORY_DATA) {
          void sendHistory(
            { ...readsOf(options.store), readEntity: (entity) => entities.readEntity(entity) },
            url,
            response,
            request.method === 'HEAD',
            options.log ?? stderrLog,
          );
          return;
        }
        const lane = url.pathname.match(LANE_PAGE);
        if (lane && !isSafeId(decoded(lane[1]!))) {
          sendPage(response, 404, htmlPage(refusalPage(`There is no such lane here: lane ids match ${SAFE_ID_RULE}.`)), request.method === 'HEAD');
          return;
        }
        const run = url.pathname.match(RUN_PAGE);
        if (run && !isSafeId(decoded(run[1]!))) {
          sendPage(response, 404, htmlPage(refusalPage(`There is no such run here: run ids match ${SAFE_ID_RULE}.`)), request.method === 'HEAD');
          return;
        }
        if (run) {
          void sendRunPage(decoded(run[1]!), {
            live: () => Object.keys(projections.state<BoardState>('board').runs),
            logged: (prefix) => entities.entityIdsStartingWith('run', prefix, LOOKUP_LIMIT),
            response,
            page: files.get(page)!,
            headOnly: request.method === 'HEAD',
            log: options.log ?? stderrLog,
          });
          return;
        }
        sendPage(response, 200, files.get(page)!, request.method === 'HEAD');
      },

      upgrades(request) {
        return urlOf(request).pathname === LIVE_PATH;
      },

      upgrade(request, socket, head) {
        const url = urlOf(request);
        const run = url.searchParams.get('run');
        const lane = url.searchParams.get('lane');
        let verdict = viewers.check(request, url);
        if (verdict.ok && !viewers.sameOrigin(request))
          verdict = { ok: false, status: 403, code: 'cross_origin', reason: "the live view is for this board's own pages" };
        if (verdict.ok && run !== null && !isSafeId(run))
          verdict = { ok: false, status: 400, code: 'invalid_id', reason: `run ids match ${SAFE_ID_RULE}` };
        if (verdict.ok && lane !== null && !isSafeId(lane))
          verdict = { ok: false, status: 400, code: 'invalid_id', reason: `lane ids match ${SAFE_ID_RULE}` };
        if (!verdict.ok) {
          viewers.rejected(request, verdict);
          refuseUpgrade(socket, verdict.status, verdict.code);
          return;
        }
        const target: LiveTarget = run !== null ? { view: 'run', runId: run } : lane !== null ? { view: 'lane', lane } : { view: 'board' };
        hub.accept(request, socket, head, target);
      },

      close() {
        folds?.stop();
        hub.close();
      },
    };
  };
}

/** The sign-in: `GET` says whether this browser is signed in, `POST {token}` signs it in, `DELETE` signs it out. */
const SESSION_PATH = '/session';
const SignInBody = z.strictObject({ token: z.string().min(1).max(200) });

/**
 * The page asks for a submit token once and trades it for the sign-in cookie (see browserWrites.ts),
 * with which its writes go to the API as the CLI's do. Signing in and out are writes too: from
 * another site's page they are refused (a page that signed a visitor in with its own token would
 * have the visitor's turns sent under it).
 */
async function signIn(viewers: ViewerAccess, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const refuse = (status: number, code: string, reason: string) => {
    viewers.rejected(request, { ok: false, status, code, reason });
    if (!request.complete) request.resume();
    sendJson(response, status, { detail: { error: code, message: reason } }, HEADERS);
  };
  const method = request.method ?? 'GET';
  if (viewers.openReads && !addressedToLoopback(request)) return refuse(HOST_NOT_ALLOWED.status, HOST_NOT_ALLOWED.code, HOST_NOT_ALLOWED.reason);
  if (method === 'GET' || method === 'HEAD') return sendJson(response, 200, { signed_in: viewers.signedIn(request) }, HEADERS);
  if (method !== 'POST' && method !== 'DELETE') return refuse(405, 'method_not_allowed', `${SESSION_PATH} takes GET, POST {token} or DELETE`);
  if (!fromOwnOrigin(request)) return refuse(CROSS_SITE.status, CROSS_SITE.code, CROSS_SITE.reason);
  if (method === 'DELETE') {
    response.writeHead(204, { 'set-cookie': SIGNED_OUT_COOKIE, ...HEADERS }).end();
    return;
  }
  let token: string;
  try {
    token = (await readJson(apiRequestOf(request), SignInBody, 4096)).token.trim();
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return refuse(error.status, error.code, `sign in with {"token": "<submit token>"}: ${error.message}`);
  }
  if (!(await viewers.acceptsSubmitToken(token)))
    return refuse(
      401,
      'unauthorized',
      'that is not a submit token of this board: use the `token` file beside its log, or one `runledger token add` printed',
    );
  response.writeHead(204, { 'set-cookie': tokenCookie(token), ...HEADERS }).end();
}

/** `GET /history/runs?state=&lane=&computer=&q=&before=&limit=`: a page of finished runs, newest first. */
async function sendHistory(
  store: Pick<EventStore, 'headSeq' | 'readAll' | 'readEntity'>,
  url: URL,
  response: ServerResponse,
  headOnly: boolean,
  log: FailureLog,
): Promise<void> {
  const query = historyQueryOf(url.searchParams, isSafeId, SAFE_ID_RULE);
  let status = 400;
  let body: unknown = { detail: { error: 'invalid_query', message: 'error' in query ? query.error : '' } };
  if (!('error' in query)) {
    try {
      body = await historyPage(store, query);
      status = 200;
    } catch (error) {
      // The daemon's log says why; the page hears that the read failed and that it may try again.
      log(`web view: the history could not be read from the log (${messageOf(error)})`);
      status = 500;
      body = { detail: { error: 'internal', message: 'the history could not be read from the log: the daemon log says why; reload to try again' } };
    }
  }
  const text = Buffer.from(JSON.stringify(body));
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': text.length, ...HEADERS });
  response.end(headOnly ? undefined : text);
}

/** RUNLEDGER_WAIT_WARN_S, when set to a whole number of seconds. */
function waitWarnFromEnv(): number | null {
  const raw = process.env.RUNLEDGER_WAIT_WARN_S;
  if (raw === undefined || !/^\d+$/.test(raw)) return null;
  return Number(raw) * 1000;
}

interface RunPageRequest {
  /** The runs the board holds now (live). */
  readonly live: () => Iterable<string>;
  /** The runs of the log starting with a prefix (finished ones included), from the store's index. */
  readonly logged: (prefix: string) => Promise<string[]>;
  readonly response: ServerResponse;
  readonly page: { type: string; body: Buffer };
  readonly headOnly: boolean;
  readonly log: FailureLog;
}

/** `/runs/<given>`: the run page, a redirect from a prefix to the whole id, or a page saying why neither. */
async function sendRunPage(given: string, request: RunPageRequest): Promise<void> {
  const { response, headOnly } = request;
  let found: { runId: string } | { status: number; page: string };
  try {
    found = await runPageOf(given, request);
  } catch (error) {
    request.log(`web view: run ids starting with ${given} could not be read from the log (${messageOf(error)})`);
    found = { status: 500, page: refusalPage('The log could not be read to find this run: the daemon log says why; reload to try again.') };
  }
  if ('status' in found) {
    sendPage(response, found.status, htmlPage(found.page), headOnly);
    return;
  }
  if (found.runId !== given) {
    // A prefix: the page of the run it names, under its whole id.
    response.writeHead(302, { location: `/runs/${found.runId}`, ...HEADERS }).end();
    return;
  }
  sendPage(response, 200, request.page, headOnly);
}

/**
 * The run `/runs/<given>` shows: given whole or by a unique prefix (README: every command takes a
 * unique prefix of a run id), live or finished (a finished run has left the board's state, so the
 * log's index of run streams is asked too), else a page saying why not: too short, the start of
 * several runs (each linked), or of none.
 */
async function runPageOf(
  given: string,
  sources: Pick<RunPageRequest, 'live' | 'logged'>,
): Promise<{ runId: string } | { status: number; page: string }> {
  try {
    const runId = await resolveRunId(given, async (prefix, limit) =>
      [...new Set([...idsStartingWith(sources.live(), prefix, limit), ...(await sources.logged(prefix))])].sort().slice(0, limit),
    );
    return runId === null ? { status: 404, page: refusalPage(`There is no such run here: ${noRunStartsWith(given)}.`) } : { runId };
  } catch (error) {
    if (!(error instanceof RunIdPrefixError)) throw error;
    if (error.candidates.length === 0) return { status: 404, page: refusalPage(`${error.message}.`) };
    const links = error.candidates.map((id) => `<li><a href="/runs/${escapeHtml(id)}"><code>${escapeHtml(id)}</code></a></li>`).join('');
    return { status: 300, page: refusalPage(`${error.message}.`, `<p>Which one?</p><ul class="candidates">${links}</ul>`) };
  }
}

function urlOf(request: IncomingMessage): URL {
  try {
    return new URL(request.url ?? '/', 'http://board.invalid');
  } catch (error) {
    // A request target that reads as no URL (`//:`) is taken for `/`.
    if (error instanceof TypeError) return new URL('http://board.invalid/');
    throw error;
  }
}

function decoded(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch (error) {
    // Malformed escapes (`%ZZ`): the segment is taken as it was written.
    if (error instanceof URIError) return raw;
    throw error;
  }
}

function htmlPage(text: string): { type: string; body: Buffer } {
  return { type: TYPES['.html']!, body: Buffer.from(text) };
}

function sendPage(response: ServerResponse, status: number, file: { type: string; body: Buffer }, headOnly: boolean): void {
  response.writeHead(status, { 'content-type': file.type, 'content-length': file.body.length, ...HEADERS });
  response.end(headOnly ? undefined : file.body);
}

function refuseUpgrade(socket: Duplex, status: number, code: string): void {
  const text = JSON.stringify({ detail: { error: code } });
  socket.end(
    `HTTP/1.1 ${status} ${code}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A page saying why nothing is shown; `more`: markup of ours to follow the reason (links to pick from). */
function refusalPage(reason: string, more = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>runledger: not shown</title><link rel="stylesheet" href="/static/app.css"></head><body><main id="main"><h1>Not shown</h1><p>${escapeHtml(reason)}</p>${more}<p><a href="/">Back to the board</a></p></main></body></html>`;
}

/** The log's reads the history makes, bound to its store. */
function readsOf(store: EventStore): Pick<EventStore, 'headSeq' | 'readAll'> {
  return { headSeq: () => store.headSeq(), readAll: (after, limit) => store.readAll(after, limit) };
}
