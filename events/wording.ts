import { z } from 'zod';

/**
 * Fields that explain a decision to a person (a `reason`) rather than say what was decided. Replay
 * compares a decision on what it decides (docs/replay-and-audit.md#what-replay-compares): a recorded
 * sentence is not compared at all, a recorded reason code is compared on its code alone. So a
 * sentence can be reworded, and a code given more parameters, without a branch in any decider.
 */
const WORDING = new WeakSet<z.ZodType>();

/** Marks `schema`, a field of an event's data, as wording (see WORDING). */
export function wording<S extends z.ZodType>(schema: S): S {
  WORDING.add(schema);
  return schema;
}

/** A reason as a code with its parameters: what the audit words, what replay compares (by `code`). */
export interface ReasonCode {
  readonly code: string;
}

export function isReasonCode(value: unknown): value is ReasonCode {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as ReasonCode).code === 'string';
}

/** The top-level fields of an event's data marked as wording (an optional or nullable field too). */
export function wordingKeys(schema: z.ZodType): readonly string[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>)
    .filter(([, field]) => WORDING.has(unwrapped(field)))
    .map(([key]) => key);
}

function unwrapped(field: z.ZodType): z.ZodType {
  let inner = field;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
  return inner;
}
