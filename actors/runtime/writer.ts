/**
 * A writer of the log: the process behind an event's `actor` (and a claim's lock), `host:pid`. Pure,
 * so that deciders may compare writers; probing whether one still runs is `processes.ts`'s.
 */
export interface Writer {
  readonly host: string;
  /** Null when what follows the host is no pid. */
  readonly pid: number | null;
}

/** `host:pid` read back. A host name may itself hold colons (an IPv6 address, an odd hostname): the pid is after the last one. */
export function writerOf(actor: string): Writer {
  const colon = actor.lastIndexOf(':');
  if (colon === -1) return { host: actor, pid: null };
  const pid = Number(actor.slice(colon + 1));
  return { host: actor.slice(0, colon), pid: Number.isSafeInteger(pid) && pid > 0 ? pid : null };
}
