import type { z } from 'zod';
import type { DomainEvent } from '../../../../events/catalog.ts';
import { HookNameSchema } from '../../../../events/hookEvents.ts';

export type HookName = z.infer<typeof HookNameSchema>;
export const HOOK_NAMES: readonly HookName[] = HookNameSchema.options;

/** The commands a board runs, by hook: `--hook NAME=COMMAND`, repeatable (the last one of a name wins). */
export type HookCommands = Partial<Record<HookName, string>>;

/** What a committed decision calls a hook for: the hook and what its payload says, lane aside. */
export interface HookCall {
  readonly hook: HookName;
  readonly runId?: string;
  readonly sessionId?: string;
  readonly state?: string;
}

/**
 * The board's decisions each hook answers (docs/rules.md#sessions-hooks-notifications): a run claimed, marked running (its first
 * heartbeat), ended (finished, reaped, or cancelled before anyone claimed it), a session's close
 * confirmed, a round's tick. Pure: the same event always calls for the same hook.
 */
export function hookOf(event: DomainEvent): HookCall | null {
  switch (event.type) {
    case 'board.run.claimed':
      return { hook: 'on_run_claimed', runId: event.data.runId, state: 'claimed' };
    case 'board.run.running':
      return { hook: 'on_run_started', runId: event.data.runId, state: 'running' };
    case 'board.run.finished':
      return { hook: 'on_run_ended', runId: event.data.runId, state: event.data.state };
    case 'board.run.resolved':
      return { hook: 'on_run_ended', runId: event.data.runId, state: 'resolved' };
    case 'board.run.cancelled':
      return { hook: 'on_run_ended', runId: event.data.runId, state: 'cancelled' };
    case 'session.closed':
      return { hook: 'on_session_closed', sessionId: event.data.sessionId, state: 'closed' };
    case 'hook.tick.due':
      return { hook: 'on_tick' };
    default:
      return null;
  }
}

/** `NAME=COMMAND` as given on the command line, checked: an unknown name is an error that lists the known ones. */
export function parseHook(text: string): [HookName, string] {
  const equals = text.indexOf('=');
  const name = equals === -1 ? text : text.slice(0, equals);
  const command = equals === -1 ? '' : text.slice(equals + 1).trim();
  const parsed = HookNameSchema.safeParse(name);
  if (!parsed.success) throw new Error(`--hook wants NAME=COMMAND with NAME one of ${HOOK_NAMES.join(', ')}, not "${name}"`);
  if (command === '') throw new Error(`--hook ${name}= names no command`);
  return [parsed.data, command];
}

/** The JSON object a hook reads on stdin. */
export interface HookPayload {
  hook: HookName;
  run_id?: string;
  lane?: string;
  session_id?: string;
  state?: string;
  /** When the decision was taken, ms since epoch (the log's time). */
  at: number;
}

export function hookPayload(call: HookCall, at: number, lane: string | null): HookPayload {
  return {
    hook: call.hook,
    ...(call.runId ? { run_id: call.runId } : {}),
    ...(lane ? { lane } : {}),
    ...(call.sessionId ? { session_id: call.sessionId } : {}),
    ...(call.state ? { state: call.state } : {}),
    at,
  };
}
