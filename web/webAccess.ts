import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { cookieOf, fromOwnOrigin, submitTokenOf, TOKEN_COOKIE } from '../adapters/http/browserWrites.ts';
import { addressedToLoopback, HOST_NOT_ALLOWED } from '../adapters/http/loopbackHost.ts';
import type { WebAccess } from '../apps/board/boardServer.ts';

export type Verdict = { readonly ok: true } | { readonly ok: false; readonly status: number; readonly code: string; readonly reason: string };

const COOKIE = 'runledger_view';
const MAX_VIEWERS = 1000;

/**
 * Who may read the web view: the API's rule (docs/rules.md#tools), read for a browser. On loopback anyone
 * on this machine, as long as the page was asked for by a loopback name (a page of another site that
 * renamed itself to 127.0.0.1, DNS rebinding, is refused). Elsewhere the submit token: once in the
 * `?token=` of a link, which trades it for a view cookie so the token leaves the address bar and the
 * browser never keeps the write credential itself. View cookies live as long as the process.
 */
export class ViewerAccess {
  private readonly viewers = new Set<string>();

  constructor(private readonly access: WebAccess) {}

  get openReads(): boolean {
    return this.access.openReads;
  }

  /** A page or a live socket: may it be read? */
  check(request: IncomingMessage, url: URL): Verdict {
    if (this.access.openReads) {
      if (!addressedToLoopback(request)) return { ok: false, ...HOST_NOT_ALLOWED };
      return { ok: true };
    }
    if (this.access.isSubmitToken(submitTokenOf(request)) || this.access.isSubmitToken(url.searchParams.get('token'))) return { ok: true };
    const viewer = cookieOf(request, COOKIE);
    if (viewer !== null && this.viewers.has(viewer)) return { ok: true };
    return {
      ok: false,
      status: 401,
      code: 'unauthorized',
      reason:
        'this board is not on loopback: sign in below with its submit token (the token file beside its log), or open the page once as /?token=<submit token>',
    };
  }

  /** A live socket must come from this board's own pages: browsers do not hold WebSockets to their origin. */
  sameOrigin(request: IncomingMessage): boolean {
    return fromOwnOrigin(request);
  }

  /** Whether the request carries the sign-in cookie of a submit token this board knows. */
  signedIn(request: IncomingMessage): boolean {
    return this.access.isSubmitToken(cookieOf(request, TOKEN_COOKIE));
  }

  /** Whether `token` is a submit token, one recorded a moment ago by another process included. */
  acceptsSubmitToken(token: string | null): Promise<boolean> {
    return this.access.acceptsSubmitToken?.(token) ?? Promise.resolve(this.access.isSubmitToken(token));
  }

  /** For a page opened with `?token=`: a cookie that stands for it, and where to go without the token. */
  trade(url: URL): { cookie: string; location: string } | null {
    if (this.access.openReads || !this.access.isSubmitToken(url.searchParams.get('token'))) return null;
    const viewer = randomBytes(24).toString('base64url');
    this.viewers.add(viewer);
    if (this.viewers.size > MAX_VIEWERS) this.viewers.delete(this.viewers.values().next().value!);
    const rest = new URLSearchParams(url.searchParams);
    rest.delete('token');
    const query = rest.toString();
    return { cookie: `${COOKIE}=${viewer}; HttpOnly; SameSite=Strict; Path=/`, location: `${url.pathname}${query ? `?${query}` : ''}` };
  }

  rejected(request: IncomingMessage, verdict: Exclude<Verdict, { ok: true }>): void {
    // The path without its query: a wrong token in `?token=` must not reach the log.
    this.access.rejected(request.method ?? 'GET', (request.url ?? '').split('?')[0]!.slice(0, 300), verdict.status, verdict.code, verdict.reason);
  }
}
