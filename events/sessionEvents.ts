import * as z from 'zod';
import { defineEvent, eventGroup } from './define.ts';
import { type GroupRoles, QUIET } from './roles.ts';
import { SafeId } from './safeId.ts';
import { sessionReason } from './sessionReasons.ts';

/** The agent's own id for the session (opaque), or a launch's key when no id was ever read for it. */
const sessionId = z.string().min(1).max(200);
/** A decision's why: a code the audit words (sessionReasons.ts), or an older version's sentence. */
const reason = sessionReason;
const at = z.number().int().nonnegative();
const ms = z.number().int().nonnegative();
const attempt = z.number().int().positive();
/** `host:pid` of the process a claim belongs to. */
const lock = z.string().min(3).max(300);

export const PresenceSchema = z.enum(['running', 'stopped', 'gone']);
export const TurnSchema = z.enum(['idle', 'working', 'needs_input', 'unknown']);
export type Turn = z.infer<typeof TurnSchema>;

/** The watch on a session that publishes no turn: since when, its record's last write then, the last reading. */
export const UnreadWatchSchema = z.strictObject({ since: at, mark: at, seen: at });
export type UnreadWatch = z.infer<typeof UnreadWatchSchema>;

/**
 * What a driver read of a session, last, just before a kill: whether anything of it is left, whether
 * a turn is in progress, its record's last write (`mark`), what a kill would stop (`target`, e.g.
 * `tmux:%3` or `pgid:4242`; null when nothing is there to stop) and what it saw, in words.
 */
export const ActivitySchema = z.strictObject({
  presence: PresenceSchema,
  turn: TurnSchema,
  mark: at.nullable(),
  target: z.string().min(1).max(200).nullable(),
  seen: z.string().max(500),
});
export type Activity = z.infer<typeof ActivitySchema>;

/** The settings a reading is decided with, recorded with it so that `replay` decides the same. */
const CloseSettingsSchema = z.strictObject({ quietMs: ms, gapMs: ms, launchWindowMs: ms });

/**
 * Closing the sessions that live on a computer (docs/rules.md#sessions-hooks-notifications, "Session close"), in
 * `<computer>/session:<key>`, written only by that session's actor. Every event names its
 * `sessionId`, so `runledger audit SESSION_ID` finds all of them.
 */
export const sessionEvents = eventGroup(
  // Inputs.
  /**
   * A run that ran in the session settled: its close is intended. `bound` is false for a launch no
   * session id was ever read for (its key stands in for one); `pid` is the run's process group when
   * its end was never seen, else null; `launchedAt` when its process began.
   */
  defineEvent('session.run.ended', () =>
    z.strictObject({
      sessionId,
      runId: SafeId,
      lane: SafeId.nullable(),
      bound: z.boolean(),
      launchedAt: at.nullable(),
      pid: z.number().int().positive().nullable(),
    }),
  ),
  /**
   * A round reached an open close. `holder` is the claim the round found, with whether its process is
   * alive (read on this host only; null elsewhere): what the claim rules decide from.
   */
  defineEvent('session.close.due', () =>
    z.strictObject({
      sessionId,
      lock,
      ttlMs: ms,
      holder: z.strictObject({ lock, alive: z.boolean().nullable() }).nullable(),
    }),
  ),
  /** The session's activity, read by the claim's holder just before a kill; `failure` when it could not be read. */
  defineEvent('session.read', () =>
    z.strictObject({
      sessionId,
      lock,
      activity: ActivitySchema.nullable(),
      failure: z.string().min(1).max(1000).nullable(),
      settings: CloseSettingsSchema,
    }),
  ),
  /** The kill effect's outcome. */
  defineEvent('session.kill.answered', () => z.strictObject({ sessionId, attempt, ok: z.boolean(), detail: z.string().max(1000) })),

  // Decisions.
  defineEvent('session.close.intended', () => z.strictObject({ sessionId, runId: SafeId, reason })),
  defineEvent('session.close.claimed', () => z.strictObject({ sessionId, lock, expires: at, reason })),
  defineEvent('session.close.deferred', () => z.strictObject({ sessionId, attempt, reason, unread: UnreadWatchSchema.nullable() })),
  /** An at-most-once effect: the kill of what the reading found, taken from the outbox after the commit. */
  defineEvent('session.kill.requested', () => z.strictObject({ sessionId, attempt, target: z.string().min(1).max(200), reason })),
  /** Confirmed: the session's process or pane is stopped (its id is kept: a later turn may resume it). */
  defineEvent('session.closed', () => z.strictObject({ sessionId, attempt, reason })),
  /** A failure that no retry can change: recorded once, and the close is not tried again. */
  defineEvent('session.close.incident', () => z.strictObject({ sessionId, attempt, reason })),
);

/** What each session event is to the summary, the subscriptions and the daemon's narration (see roles.ts). */
export const sessionRoles = {
  'session.run.ended': QUIET,
  'session.close.due': QUIET,
  'session.read': QUIET,
  'session.kill.answered': QUIET,
  'session.close.intended': { summary: 'sessions', notice: null, told: false },
  'session.close.claimed': QUIET,
  'session.close.deferred': { summary: 'sessions', notice: null, told: true },
  'session.kill.requested': QUIET,
  'session.closed': { summary: 'sessions', notice: 'session.closed', told: true },
  'session.close.incident': { summary: 'sessions', notice: null, told: true },
} as const satisfies GroupRoles<typeof sessionEvents>;
