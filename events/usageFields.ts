/**
 * The fields of a usage (events/usage.ts), in the order they are told: one list for sums, metrics and
 * words. Apart from the schema so that `runledger status`, which sums and prints them, loads no zod.
 */
export const USAGE_FIELDS = ['costUsd', 'inputTokens', 'outputTokens', 'cachedInputTokens'] as const;
