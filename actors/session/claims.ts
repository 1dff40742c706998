import { writerOf } from '../writer.ts';
import type { CloseClaim } from './sessionState.ts';

/** A process reuses its own claim while more than this is left of it; with less it claims again. */
export const OWN_CLAIM_REUSE_MS = 60_000;

/** The claim a round found, and whether its process is alive where that can be read (this host). */
export interface Holder {
  readonly lock: string;
  readonly alive: boolean | null;
}

/**
 * Whether `claim` keeps the process `lock` off its close at `at`: it is another process's, unexpired,
 * and, on this host, its process is alive. A dead process's claim is open at once on its own host
 * (its pid can be read there), and only at its expiry from another host. Pure: whether the holder is
 * alive was read outside and comes in with the round's input.
 */
export function claimHolds(claim: CloseClaim | null, lock: string, holder: Holder | null, at: number): boolean {
  if (claim === null || claim.lock === lock || claim.expires <= at) return false;
  if (writerOf(claim.lock).host !== writerOf(lock).host) return true;
  // A reading of another claim than this one says nothing about it: keep off.
  if (holder === null || holder.lock !== claim.lock) return true;
  return holder.alive !== false;
}

/** This process's own claim, with more than a minute of it left: used again, not renewed. */
export function ownClaimReusable(claim: CloseClaim | null, lock: string, at: number): boolean {
  return claim !== null && claim.lock === lock && claim.expires - at > OWN_CLAIM_REUSE_MS;
}

/** Whether `lock` holds the claim at `at` (a round goes on to read only then). */
export function holdsClaim(claim: CloseClaim | null, lock: string, at: number): boolean {
  return claim !== null && claim.lock === lock && claim.expires > at;
}
