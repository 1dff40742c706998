import type { Usage } from './usage.ts';

// Apart from the Usage schema: `status` and `show` word usage without loading zod (test/cli/startup.test.ts).

/** Costs to 4 decimals (a turn costs cents), without float dust. */
export function roundCost(cost: number): string {
  return String(Math.round(cost * 10_000) / 10_000);
}

/** One run's usage in words, only what its agent reported: `cost $0.0123, tokens: 12 in, 7 out, 3000 cached`. */
export function usageWords(usage: Usage): string {
  const tokens = [
    usage.inputTokens === undefined ? null : `${usage.inputTokens} in`,
    usage.outputTokens === undefined ? null : `${usage.outputTokens} out`,
    usage.cachedInputTokens === undefined ? null : `${usage.cachedInputTokens} cached`,
  ].filter((part) => part !== null);
  return [usage.costUsd === undefined ? null : `cost $${roundCost(usage.costUsd)}`, tokens.length ? `tokens: ${tokens.join(', ')}` : null]
    .filter((part) => part !== null)
    .join(', ');
}
