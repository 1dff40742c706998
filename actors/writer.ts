/**
 * A writer of the log: the process behind an event's `actor` (and a claim's lock), `host:pid`, or
 * `host#incarnation:pid` on a log shared by several machines (sharedLogWriter). Pure, so that deciders
 * may compare writers; probing whether one still runs is `processes.ts`'s.
 */
export interface Writer {
  readonly host: string;
  /** Null when what follows the host is no pid. */
  readonly pid: number | null;
  /** The process's life, when its writer names one: two processes of one host and pid are two writers. */
  readonly incarnation?: string;
}

/** `host:pid` read back. A host name may itself hold colons (an IPv6 address, an odd hostname): the pid is after the last one. */
export function writerOf(actor: string): Writer {
  const colon = actor.lastIndexOf(':');
  if (colon === -1) return { host: actor, pid: null };
  const pid = Number(actor.slice(colon + 1));
  const named = actor.slice(0, colon);
  // No host name holds a '#' (nor does an IPv6 address): what follows it is the incarnation.
  const hash = named.lastIndexOf('#');
  return {
    host: hash === -1 ? named : named.slice(0, hash),
    pid: Number.isSafeInteger(pid) && pid > 0 ? pid : null,
    ...(hash === -1 ? {} : { incarnation: named.slice(hash + 1) }),
  };
}
