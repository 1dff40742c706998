import * as z from 'zod';
import { defineEvent, eventGroup } from './define.ts';
import { type GroupRoles, QUIET } from './roles.ts';
import { SafeId } from './safeId.ts';

/** The hooks a board runs (docs/rules.md#sessions-hooks-notifications, "Hooks and notifications"). */
export const HookNameSchema = z.enum(['on_run_claimed', 'on_run_started', 'on_run_ended', 'on_session_closed', 'on_tick']);

const seq = z.number().int().positive();
/** An agent's session id, opaque (as the session events carry it). */
const sessionId = z.string().min(1).max(200);
/** Enough of a hook's output to see why it failed, never enough to bloat the log. */
export const HOOK_OUTPUT_TAIL_CHARS = 2_000;

/**
 * A hook's run, recorded in `outbox:hooks` beside the takes (`outbox.taken`) that moved the hooks cursor
 * past its event. `effect` is the seq of the event the hook answers; `runId` and `sessionId` put the
 * record in the audit of the run or session it was about.
 */
export const hookEvents = eventGroup(
  /**
   * A round's tick, recorded only by a board that has an `on_tick` hook: the hook runs from the log like
   * every other, so it is taken once, and a crash that cuts it shows.
   */
  defineEvent('hook.tick.due', () => z.strictObject({ counts: z.record(z.string(), z.number().int().nonnegative()) })),
  defineEvent('hook.exited', () =>
    z.strictObject({
      effect: seq,
      hook: HookNameSchema,
      runId: SafeId.optional(),
      sessionId: sessionId.optional(),
      ok: z.boolean(),
      /** Null when it was ended by a signal, or never started (then `error` says why). */
      exitCode: z.number().int().nullable(),
      signal: z.string().nullable(),
      error: z.string().max(500).nullable(),
      /** The end of its stdout and stderr, interleaved as they came. */
      outputTail: z.string().max(HOOK_OUTPUT_TAIL_CHARS),
      durationMs: z.number().int().nonnegative(),
    }),
  ),
  /** Taken by a process that died while the hook ran (or before it began): it is never run again. */
  defineEvent('hook.interrupted', () =>
    z.strictObject({
      effect: seq,
      hook: HookNameSchema,
      runId: SafeId.optional(),
      sessionId: sessionId.optional(),
      detail: z.string().min(1).max(500),
    }),
  ),
);

/** What each hook event is to the summary, the subscriptions and the daemon's narration (see roles.ts). */
export const hookRoles = {
  'hook.tick.due': QUIET,
  'hook.exited': { summary: 'sessions', notice: null, told: true },
  'hook.interrupted': { summary: 'sessions', notice: null, told: true },
} as const satisfies GroupRoles<typeof hookEvents>;
