import * as z from 'zod';
import { USAGE_FIELDS, type Usage } from '../usage.ts';

/**
 * `usage` as the wire carries it (docs/rules.md#wire-and-cli): `{cost_usd?, input_tokens?, output_tokens?,
 * cached_input_tokens?}`, on `complete` and in `GET /v1/runs/{run_id}`. The bounds refuse what no turn
 * can cost (a cost over $100,000, tokens over ten billion or not whole), naming the field: a number
 * like that is a bug of the sender's, not a fact to keep. The computer drops such a field before
 * sending, so a completion is never refused for what its agent printed.
 */
const MAX_COST_USD = 100_000;
const MAX_TOKENS = 10_000_000_000;
const tokens = z.number().int().min(0).max(MAX_TOKENS);
const FIELDS = {
  cost_usd: z.number().min(0).max(MAX_COST_USD),
  input_tokens: tokens,
  output_tokens: tokens,
  cached_input_tokens: tokens,
} as const;
export const UsageBody = z.strictObject({
  cost_usd: FIELDS.cost_usd.optional(),
  input_tokens: tokens.optional(),
  output_tokens: tokens.optional(),
  cached_input_tokens: tokens.optional(),
});
export type UsageBody = z.infer<typeof UsageBody>;

const WIRE_NAMES = {
  costUsd: 'cost_usd',
  inputTokens: 'input_tokens',
  outputTokens: 'output_tokens',
  cachedInputTokens: 'cached_input_tokens',
} as const satisfies Record<(typeof USAGE_FIELDS)[number], keyof UsageBody>;

/** The wire's form of a usage, keeping only the fields the board takes; null when none is left. */
export function usageToWire(usage: Usage | undefined | null): UsageBody | null {
  if (!usage) return null;
  const body: Record<string, number> = {};
  for (const field of USAGE_FIELDS) {
    const name = WIRE_NAMES[field];
    const value = usage[field];
    if (value !== undefined && FIELDS[name].safeParse(value).success) body[name] = value;
  }
  return Object.keys(body).length === 0 ? null : body;
}

/** A usage as the board records it, from the wire's (checked by UsageBody); undefined when it says nothing. */
export function usageFromWire(body: UsageBody | undefined): Usage | undefined {
  if (!body) return undefined;
  const usage: Record<string, number> = {};
  for (const field of USAGE_FIELDS) {
    const value = body[WIRE_NAMES[field]];
    if (value !== undefined) usage[field] = value;
  }
  return Object.keys(usage).length === 0 ? undefined : usage;
}
