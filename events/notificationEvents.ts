import * as z from 'zod';
import { defineEvent, eventGroup } from './define.ts';
import { notificationReason } from './notificationReasons.ts';
import { wording } from './replayFields.ts';
import { type GroupRoles, QUIET } from './roles.ts';
import { SafeId } from './safeId.ts';

/**
 * What a subscription can ask to hear: a run of its lane (or of any lane) queued, claimed, started or
 * ended; a session closed; a lane adopting a session; a computer coming or going (board-level kinds,
 * heard whatever the lane).
 */
export const NoticeKindSchema = z.enum([
  'run.queued',
  'run.claimed',
  'run.started',
  'run.ended',
  'session.closed',
  'lane.adopted',
  'computer.online',
  'computer.offline',
]);

const seq = z.number().int().positive();
/** Why a subscription was closed, in its closer's words (an input's `reason`). */
const said = wording(z.string().min(1).max(1_000));
/** A decision's why: a code the audit words (notificationReasons.ts), or an older version's sentence. */
const reason = notificationReason;
const sessionId = SafeId;
const subscriptionId = SafeId;

/** One event of the log a subscription hears, as the round found it past the subscription's cursor. */
export const NoticeSourceSchema = z.strictObject({
  subscriptionId,
  /** The seq of the event heard: the subscription's cursor moves past it once it is filed. */
  source: seq,
  kind: NoticeKindSchema,
  runId: SafeId.optional(),
  lane: SafeId.optional(),
  computerId: SafeId.optional(),
  /** The session a `session.closed` or `lane.adopted` is about (an agent's id, opaque). */
  about: z.string().min(1).max(200).optional(),
  /** A run's end state, or what a session close or an adoption came to. */
  state: z.string().max(64).optional(),
  /** The heard event's own time. */
  sourceAt: z.number().int().nonnegative(),
});

/** What the board's record says of a session, and what reading its liveness found (when it was read). */
export const SessionRecordSchema = z.enum(['live', 'ended', 'unknown']);
export const LivenessSchema = z.enum(['running', 'stopped', 'gone', 'unreadable']);

/**
 * A session's inbox, `inbox:<sessionId>` (docs/rules.md#sessions-hooks-notifications): its subscriptions, the notices filed for
 * it, what the board reported while it could not file, and which notices were handed to its agent.
 * A stream of its own: filing contends only with other filings and handings of this session, and each
 * filing is appended at the inbox's version as the round read it, so no notice is filed twice.
 */
export const notificationEvents = eventGroup(
  // Inputs.
  defineEvent('subscription.opened', () =>
    z.strictObject({
      subscriptionId,
      sessionId,
      /** Runs of this lane only; null for every lane. Board-level kinds are heard whatever the lane. */
      lane: SafeId.nullable(),
      kinds: z.array(NoticeKindSchema).min(1),
      /** The head of the log when it was opened: it hears what comes after, never history. */
      from: z.number().int().nonnegative(),
    }),
  ),
  defineEvent('subscription.closed', () => z.strictObject({ subscriptionId, sessionId, reason: said })),
  /**
   * A round's reading for one session: the board's record of it, its liveness when that had to be
   * read (`liveness`, null when the record sufficed), and the events its subscriptions hear past their
   * cursors, in order. Recorded only when something is decided from it.
   */
  defineEvent('inbox.read', () =>
    z.strictObject({
      sessionId,
      record: SessionRecordSchema,
      liveness: LivenessSchema.nullable(),
      detail: z.string().max(500).nullable(),
      heard: z.array(NoticeSourceSchema),
    }),
  ),
  /** The inbox's notices 1 to `through` were put ahead of a turn's prompt (`runId`'s, when a run's). */
  defineEvent('notices.handed', () => z.strictObject({ sessionId, through: z.number().int().positive(), runId: SafeId.nullable() })),

  // Decisions.
  defineEvent('notice.filed', () =>
    z.strictObject({
      ...NoticeSourceSchema.shape,
      sessionId,
      /** Its place in the inbox: 1 for the session's first notice. */
      n: z.number().int().positive(),
      /** One line the agent reads. */
      text: z.string().min(1).max(1_000),
    }),
  ),
  /** Its liveness could not be read: its notices wait (cursors stay), said once per wait. */
  defineEvent('inbox.waiting', () => z.strictObject({ sessionId, reason })),
  /** The board recorded it ended and it is not read running: it is filed nothing, said once. */
  defineEvent('inbox.withheld', () => z.strictObject({ sessionId, reason })),
);

/** What each notification event is to the summary, the subscriptions and the daemon's narration (see roles.ts). */
export const notificationRoles = {
  'subscription.opened': QUIET,
  'subscription.closed': QUIET,
  'inbox.read': QUIET,
  'notices.handed': { summary: 'sessions', notice: null, told: false },
  'notice.filed': { summary: 'sessions', notice: null, told: false },
  'inbox.waiting': { summary: 'sessions', notice: null, told: true },
  'inbox.withheld': { summary: 'sessions', notice: null, told: true },
} as const satisfies GroupRoles<typeof notificationEvents>;
