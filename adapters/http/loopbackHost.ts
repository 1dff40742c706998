import type { WithHeaders } from './http.ts';

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Whether a request was addressed to this machine by a loopback name (`Host`, any port). A board on
 * loopback serves nobody else: a page of another site that renamed itself to 127.0.0.1 (DNS
 * rebinding) still sends its own name, and is refused. Shared by the API and the web view.
 */
export function addressedToLoopback(request: WithHeaders): boolean {
  return LOOPBACK_NAMES.has(hostName(request.headers.host));
}

export const HOST_NOT_ALLOWED = {
  status: 403,
  code: 'host_not_allowed',
  reason: 'this board listens on loopback: open it as 127.0.0.1 or localhost',
} as const;

function hostName(host: string | undefined): string {
  if (!host) return '';
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return name.toLowerCase();
}
