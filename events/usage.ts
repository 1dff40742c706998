import { z } from 'zod';

/**
 * What a turn cost, as its agent reported it (docs/rules.md#wire-and-cli `usage`): recorded with the run's exit on
 * its computer, sent on `complete`, kept by the board. Every field is optional: plain agents and older
 * logs have none, and an agent may report tokens without a cost (Codex).
 */
export const Usage = z.strictObject({
  costUsd: z.number().nonnegative().optional(),
  inputTokens: z.number().nonnegative().optional(),
  outputTokens: z.number().nonnegative().optional(),
  cachedInputTokens: z.number().nonnegative().optional(),
});
export type Usage = z.infer<typeof Usage>;
export { USAGE_FIELDS } from './usageFields.ts';

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
