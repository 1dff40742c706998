/** What a claim's HTTP answer means for the run (docs/rules.md#computer-behaviour, "Claims"). */
export type ClaimVerdict =
  | { kind: 'claimed' }
  | { kind: 'busy' }
  | { kind: 'elsewhere' }
  | { kind: 'gone' }
  | { kind: 'retry' }
  | { kind: 'refused' };

export function claimVerdict(status: number, code: string | undefined): ClaimVerdict {
  if (status === 200 || status === 201) return { kind: 'claimed' };
  if (status === 409) return code === 'conversation_busy' ? { kind: 'busy' } : { kind: 'elsewhere' };
  if (status === 404 || status === 410) return { kind: 'gone' };
  if (status === 0 || status === 429 || status >= 500) return { kind: 'retry' };
  return { kind: 'refused' };
}

/**
 * A refusal's code, from `{detail: {error}}`, `{detail: "<code>"}` or `{error}`; the caller matches it
 * exactly. Anything else has no code.
 */
export function errorCodeOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { detail, error } = body as { detail?: unknown; error?: unknown };
  if (typeof detail === 'string') return detail;
  if (detail && typeof detail === 'object' && !Array.isArray(detail)) {
    const inner = (detail as { error?: unknown }).error;
    return typeof inner === 'string' ? inner : undefined;
  }
  return typeof error === 'string' ? error : undefined;
}

/** Waits after a `conversation_busy`: 30 s doubling per earlier wait, at most 2 min. */
export function busyBackoffMs(earlierWaits: number): number {
  return Math.min(30_000 * 2 ** earlierWaits, 120_000);
}

/** Waits after a network error, 429 or 5xx: 2 s doubling per earlier attempt. */
export function claimRetryMs(earlierAttempts: number): number {
  return 2_000 * 2 ** earlierAttempts;
}

export const MAX_CLAIM_ATTEMPTS = 5;
