import { adoptionDecider, hasOpenRequest } from '../../../../actors/board/adoption/adoptionDecider.ts';
import { type AdoptionState, DEFAULT_ADOPTION_TTL_MS } from '../../../../actors/board/adoption/adoptionState.ts';
import { readLane } from '../../../../actors/board/adoption/laneStream.ts';
import { writerOf } from '../../../../actors/writer.ts';
import { wordAdoptionReason } from '../../../../events/adoptionReasons.ts';
import type { NewDomainEvent } from '../../../../events/catalog.ts';
import { messageOf } from '../../../../events/thrown.ts';
import type { Clock } from '../../../../runtime/actors/clock.ts';
import { decideAndAppend, onlyStreamsRead } from '../../../../runtime/actors/decideAndAppend.ts';
import { writerIsAlive } from '../../../../runtime/actors/processes.ts';
import { retryOnConflict } from '../../../../runtime/actors/retryOnConflict.ts';
import { type EventStore, StaleVersionError } from '../../../../runtime/store/eventStore.ts';

/** Where sessions are listed: the computer a session lives on, null when none lists it; throws when it cannot be read. */
export interface SessionListing {
  find(sessionId: string): Promise<string | null>;
}

/**
 * The write outside the board that binds a session to a lane (a pane tagged, a record kept beside the
 * agent): made only by the round whose claim committed. Throws when it failed.
 */
export interface AdoptionBinder {
  bind(binding: { lane: string; sessionId: string; computerId: string }): Promise<void>;
}

/** Binds nothing outside the log: the lane's computer reads `adoption.adopted` from it. */
export const logOnlyBinder: AdoptionBinder = {
  bind: async () => {
    // The lane's computer reads `adoption.adopted` from the log: nothing to do here.
  },
};

export interface AdoptionRoundOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly listing: SessionListing;
  readonly binder: AdoptionBinder;
  /** This round's claim lock; the store's `host:pid` by default. */
  readonly lock?: string;
  readonly ttlMs?: number;
}

export interface AdoptionReport {
  adopted: [lane: string, sessionId: string][];
  failed: [lane: string, reason: string][];
  waiting: [lane: string, reason: string][];
  /** Requests this round left: claimed by a live process, or answered by another round first. */
  skipped: [lane: string, reason: string][];
}

/**
 * One round's adoptions: every lane whose latest request may be open (from `adoptions`, the index
 * projection) is read again from its own stream, and decided at that stream's version. The claim is
 * appended before the bind; a round that lost the race to another (a stale append) leaves the request.
 */
export async function completeAdoptions(options: AdoptionRoundOptions, lanes: Record<string, AdoptionState>): Promise<AdoptionReport> {
  const report: AdoptionReport = { adopted: [], failed: [], waiting: [], skipped: [] };
  for (const [lane, indexed] of Object.entries(lanes)) {
    if (!hasOpenRequest(indexed)) continue;
    await adoptOne(options, lane, report);
  }
  return report;
}

async function adoptOne(options: AdoptionRoundOptions, lane: string, report: AdoptionReport): Promise<void> {
  const { store, clock } = options;
  const lock = options.lock ?? store.writer;
  const stream = `lane:${lane}`;
  const { state, versions } = await readLane(store, lane);
  const request = state.request;
  if (!request || !hasOpenRequest(state)) return;

  let listedOn: string | null = null;
  let error: string | null = null;
  try {
    listedOn = await options.listing.find(request.sessionId);
  } catch (e) {
    error = messageOf(e).slice(0, 500);
  }
  const claim = state.latest === 'claimed' && state.claim ? { lock: state.claim.lock, alive: writerIsAlive(writerOf(state.claim.lock)) } : null;
  const reading: NewDomainEvent = {
    stream,
    type: 'adoption.listing.read',
    data: { lane, request: request.n, sessionId: request.sessionId, lock, listedOn, error, claim, ttlMs: options.ttlMs ?? DEFAULT_ADOPTION_TTL_MS },
    at: clock.now(),
  };
  const step = await decideAndAppend(store, adoptionDecider, state, reading, versions, onlyStreamsRead);
  if (!step.ok) {
    report.skipped.push([lane, 'another round answered or claimed it first']);
    return;
  }
  const decision = step.decisions[0];
  if (!decision) {
    if (claim) report.skipped.push([lane, `claimed by ${claim.lock}`]);
    return;
  }
  if (decision.type === 'adoption.waiting') report.waiting.push([lane, wordAdoptionReason(decision.data.reason)]);
  if (decision.type === 'adoption.failed') report.failed.push([lane, wordAdoptionReason(decision.data.reason)]);
  if (decision.type !== 'adoption.claimed') return;

  // The claim committed: this round, and no other, binds.
  const { computerId } = decision.data;
  let bindError: string | null = null;
  try {
    await options.binder.bind({ lane, sessionId: request.sessionId, computerId });
  } catch (e) {
    bindError = messageOf(e).slice(0, 500) || 'the bind failed';
  }
  const ended: NewDomainEvent = {
    stream,
    type: 'adoption.bind.ended',
    data: { lane, request: request.n, sessionId: request.sessionId, lock, computerId, ok: bindError === null, error: bindError },
    at: clock.now(),
  };
  // Each attempt starts from the lane as the log has it: written meanwhile (a release, a new request),
  // the bind's end is still recorded, against what is there now.
  const answer = await retryOnConflict(async () => {
    const now = await readLane(store, lane);
    const outcome = await decideAndAppend(store, adoptionDecider, now.state, ended, now.versions, onlyStreamsRead);
    return outcome.ok ? outcome.decisions[0] : outcome.conflict;
  }).catch((error: unknown) => {
    // Written faster than this round decides: reported as skipped below, as a round that lost its race.
    if (error instanceof StaleVersionError) return undefined;
    throw error;
  });
  if (answer?.type === 'adoption.adopted') report.adopted.push([lane, request.sessionId]);
  else if (answer?.type === 'adoption.failed') report.failed.push([lane, wordAdoptionReason(answer.data.reason)]);
  else report.skipped.push([lane, `bound session ${request.sessionId}, but the request was answered meanwhile`]);
}
