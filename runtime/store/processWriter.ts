import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** This process's life: random, made once per process, so two processes never share it (unlike `host:pid`). */
export const PROCESS_INCARNATION = randomBytes(6).toString('hex');

/**
 * The writer (`actor` column) of a store on a log several processes on several machines write (a
 * PostgreSQL log's boards, docs/rules.md#postgresql-board): `host#incarnation:pid`. Boards in containers may share a host name
 * and pid 1; with the incarnation recorded in each event, no board takes another's events, claims or
 * takes for its own, nor a former life's (the same container restarted) for its own.
 */
export function sharedLogWriter(): string {
  return `${hostname()}#${PROCESS_INCARNATION}:${process.pid}`;
}
