import * as z from 'zod';

/**
 * How replay compares a field of a decision, when not byte for byte (docs/replay-and-audit.md#what-replay-compares).
 * Marked where the field is declared, in the event's schema, so an event group says it in one place.
 *
 * - wording: it explains the decision to a person (a `reason`) rather than say what was decided. A
 *   recorded sentence is not compared at all, a recorded reason code on its code alone. So a
 *   sentence can be reworded, and a code given more parameters, without a branch in any decider.
 * - added later: an optional field a decision gained after versions whose logs exist decided it
 *   without it, from the same inputs. Such a recorded decision lacks the field and is the same
 *   decision; one recorded with another value still differs.
 */
const WORDING = new WeakSet<z.ZodType>();
const ADDED_LATER = new WeakSet<z.ZodType>();

/** Marks `schema`, a field of an event's data, as wording. */
export function wording<S extends z.ZodType>(schema: S): S {
  WORDING.add(schema);
  return schema;
}

/** Marks `schema`, an optional field of an event's data, as one older versions decided without. */
export function addedLater<S extends z.ZodOptional>(schema: S): S {
  ADDED_LATER.add(schema);
  return schema;
}

/** A reason as a code with its parameters: what the audit words, what replay compares (by `code`). */
export interface ReasonCode {
  readonly code: string;
}

export function isReasonCode(value: unknown): value is ReasonCode {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as ReasonCode).code === 'string';
}

/**
 * A decision's `reason` field (docs/replay-and-audit.md#reasons-as-codes): a code of `codes`, as this
 * version records it, or the sentence an older version recorded. Wording: replay compares its code only.
 * Each group's codes are a `z.lazy`: a union of tens of objects, built when a reason of the group is
 * first checked, not at every start that loads the catalog (most starts meet one group or none).
 */
export function recordedReason<C extends z.ZodType<ReasonCode>>(codes: C) {
  return wording(z.union([z.string().min(1), codes]));
}

/**
 * The one sentence for a recorded reason, from a group's `words` for its codes: a sentence an older
 * version recorded is given back as it was written.
 */
export function reasonWords<R extends ReasonCode>(words: (reason: R) => string): (reason: string | R) => string {
  return (reason) => (typeof reason === 'string' ? reason : words(reason));
}

/** The top-level fields of an event's data marked as wording (an optional or nullable field too). */
export function wordingKeys(schema: z.ZodType): readonly string[] {
  return fields(schema)
    .filter(([, field]) => WORDING.has(unwrapped(field)))
    .map(([key]) => key);
}

/** The top-level fields of an event's data marked as added later. */
export function addedLaterKeys(schema: z.ZodType): readonly string[] {
  return fields(schema)
    .filter(([, field]) => ADDED_LATER.has(field))
    .map(([key]) => key);
}

function fields(schema: z.ZodType): [string, z.ZodType][] {
  return schema instanceof z.ZodObject ? Object.entries(schema.shape as Record<string, z.ZodType>) : [];
}

function unwrapped(field: z.ZodType): z.ZodType {
  let inner = field;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
  return inner;
}
