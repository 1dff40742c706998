import { bearerOf, type WithHeaders } from './http.ts';

/**
 * The cookie the web view's sign-in sets: the submit token itself, `HttpOnly` (no script of any page
 * reads it) and `SameSite=Strict` (no other site's page sends it). It holds the token rather than a
 * session of this process so that a sign-in outlives a restart of the board and holds on every board
 * of a PostgreSQL log; `runledger token add` tokens can be revoked like any other.
 */
export const TOKEN_COOKIE = 'runledger_token';

/** A year: the token file does not expire either; signing out ends it sooner. */
const COOKIE_MAX_AGE_S = 365 * 24 * 3600;

export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${COOKIE_MAX_AGE_S}`;
}

export const SIGNED_OUT_COOKIE = `${TOKEN_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;

/** A cookie of the request, by name, or null. */
export function cookieOf(request: WithHeaders, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=') || null;
  }
  return null;
}

/** The submit token a write carries: `Authorization: Bearer` (the CLI), else the sign-in cookie (a browser). */
export function submitTokenOf(request: WithHeaders): string | null {
  return bearerOf(request) ?? cookieOf(request, TOKEN_COOKIE);
}

/**
 * Whether a request came from a page of this board's own origin, by its `Origin` header. Browsers
 * send it with every write (fetch and form alike), so a page of another site that posts to the board
 * (loopback included: any page a user visits can aim at 127.0.0.1:7420) names its own origin and is
 * refused. A request without one is not a browser's write (the CLI, a computer): unaffected. An
 * Origin that is no URL (`null`, from a sandboxed frame or a redirect) is no page of this board's.
 */
export function fromOwnOrigin(request: WithHeaders): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host === request.headers.host;
  } catch (error) {
    if (error instanceof TypeError) return false;
    throw error;
  }
}

export const CROSS_SITE = {
  status: 403,
  code: 'cross_site',
  reason: "a page of another site may not write to this board: act from the board's own pages",
} as const;
