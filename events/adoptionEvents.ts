import * as z from 'zod';
import { adoptionReason } from './adoptionReasons.ts';
import { defineEvent, eventGroup } from './define.ts';
import { wording } from './replayFields.ts';
import { type GroupRoles, QUIET } from './roles.ts';
import { SafeId } from './safeId.ts';

/** Which of the lane's adoption requests (1 for its first): what every answer names. */
const request = z.number().int().positive();
const lane = SafeId;
const sessionId = SafeId;
/** Why a release was asked, in its asker's words (an input's `reason`). */
const said = wording(z.string().min(1).max(1_000));
/** A decision's why: a code the audit words (adoptionReasons.ts), or an older version's sentence. */
const reason = adoptionReason;
/** `host:pid` of the process holding a claim. */
const lock = z.string().min(3).max(300);

/**
 * Adoption (docs/rules.md#sessions-hooks-notifications): binding a live session to a lane, so that the lane's next turns run in
 * it. Every event is in the board's `lane:<id>`. The request, its release, its claim and its outcome
 * are the lane's "answers": a request is open while it is the lane's latest answer (or a claim of it
 * that no longer holds). Each is appended at the lane stream's version as read, so of two rounds that
 * read one open request only one claims it.
 */
export const adoptionEvents = eventGroup(
  // Inputs.
  /** `runledger adopt LANE SESSION`: the lane is held for the adoption until it is answered. */
  defineEvent('adoption.requested', () => z.strictObject({ lane, sessionId })),
  /** `runledger adopt LANE --release`: an open request is withdrawn. */
  defineEvent('adoption.released', () => z.strictObject({ lane, reason: said })),
  /**
   * A round's reading for an open request: where the session is listed (null: not listed, `error`: the
   * listing could not be read), and the latest claim it found with whether its process is alive (null
   * when it runs on another host and cannot be probed). `lock` is the reading round's own.
   */
  defineEvent('adoption.listing.read', () =>
    z.strictObject({
      lane,
      request,
      sessionId,
      lock,
      listedOn: SafeId.nullable(),
      error: z.string().max(500).nullable(),
      claim: z.strictObject({ lock, alive: z.boolean().nullable() }).nullable(),
      /** How long a claim made from this reading holds. */
      ttlMs: z.number().int().positive(),
    }),
  ),
  /** The claiming round's outside write (the bind) is over. */
  defineEvent('adoption.bind.ended', () =>
    z.strictObject({ lane, request, sessionId, lock, computerId: SafeId, ok: z.boolean(), error: z.string().max(500).nullable() }),
  ),

  // Decisions.
  defineEvent('adoption.claimed', () =>
    z.strictObject({ lane, request, sessionId, computerId: SafeId, lock, expires: z.number().int().nonnegative(), reason }),
  ),
  /** Its session is not listed yet: it waits (said once), until the listing window closes. */
  defineEvent('adoption.waiting', () => z.strictObject({ lane, request, sessionId, until: z.number().int().nonnegative(), reason })),
  defineEvent('adoption.adopted', () => z.strictObject({ lane, request, sessionId, computerId: SafeId, reason })),
  defineEvent('adoption.failed', () => z.strictObject({ lane, request, sessionId, reason })),
);

/** What each adoption event is to the summary, the subscriptions and the daemon's narration (see roles.ts). */
export const adoptionRoles = {
  'adoption.requested': { summary: 'sessions', notice: null, told: false },
  'adoption.released': { summary: 'sessions', notice: null, told: false },
  'adoption.listing.read': QUIET,
  'adoption.bind.ended': QUIET,
  'adoption.claimed': QUIET,
  'adoption.waiting': QUIET,
  'adoption.adopted': { summary: 'sessions', notice: 'lane.adopted', told: true },
  'adoption.failed': { summary: 'sessions', notice: null, told: true },
} as const satisfies GroupRoles<typeof adoptionEvents>;
