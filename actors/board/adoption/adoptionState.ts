/** The lane's answers to adoption requests (docs/rules.md#sessions-hooks-notifications, "Adoption"). */
export type AdoptionAnswer = 'requested' | 'released' | 'claimed' | 'adopted' | 'failed';

export interface AdoptionRequest {
  /** Its ordinal in the lane: 1 for the lane's first request. */
  readonly n: number;
  readonly sessionId: string;
  /** When it was asked: the listing window runs from here. */
  readonly at: number;
}

export interface AdoptionClaim {
  readonly lock: string;
  readonly expires: number;
  readonly computerId: string;
}

/** One lane's adoptions, folded from its `lane:<id>` stream. */
export interface AdoptionState {
  readonly lane: string;
  requests: number;
  /** The lane's latest request, answered or not. */
  request: AdoptionRequest | null;
  /** The lane's latest answer: the request is open while it is `requested`, or a claim that no longer holds. */
  latest: AdoptionAnswer | null;
  /** The claim of the latest request, while it is the latest answer. */
  claim: AdoptionClaim | null;
  /** The latest request's wait for its session to be listed has been said. */
  waitSaid: boolean;
  /** The session the lane's turns run in since its last adoption, and where it lives. */
  adopted: { readonly sessionId: string; readonly computerId: string } | null;
}

export function initialAdoptionState(lane: string): AdoptionState {
  return { lane, requests: 0, request: null, latest: null, claim: null, waitSaid: false, adopted: null };
}

/** How long a requested adoption waits for its session to be listed before it fails. */
export const ADOPTION_LISTING_WINDOW_MS = 180_000;
/** How long a claim on an adoption holds, unless the reading says otherwise. */
export const DEFAULT_ADOPTION_TTL_MS = 15 * 60_000;
