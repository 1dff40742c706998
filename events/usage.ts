import * as z from 'zod';

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
