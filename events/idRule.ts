/**
 * The one rule for an id (a run, lane, computer, session, subscription, incarnation): it may name a
 * folder, a path segment and the id part of a stream name (docs/rules.md#tools), so nothing escapes the
 * workspace and nothing needs escaping. Written out here only; everything else derives from it.
 * No zod here: the CLI's option definitions check ids without loading the schemas (start time).
 */
const ID_CHARACTERS = '[A-Za-z0-9-]{1,64}';

/** The rule as a whole-string regex: its `source`, `^[A-Za-z0-9-]{1,64}$`, is what messages quote. */
export const SAFE_ID = new RegExp(`^${ID_CHARACTERS}$`);

/** The rule's text for a message that names a bad id: `^[A-Za-z0-9-]{1,64}$`. */
export const SAFE_ID_RULE = SAFE_ID.source;

/** The rule without anchors, for a pattern that holds an id among other things (a stream name, `NAME=N`). */
export const SAFE_ID_PART = ID_CHARACTERS;

/** The same rule for a hot path (every HTTP request, every frame) that need not build a zod result. */
export function isSafeId(value: unknown): value is string {
  return typeof value === 'string' && SAFE_ID.test(value);
}
