import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';

/**
 * A run named by a unique prefix of its id (docs/rules.md#tools): the narration prints 8 characters, and
 * every command (and the web view's `/runs/<prefix>`) takes any unique start of 6 or more.
 */
export const MIN_PREFIX = 6;
/** How many candidates an ambiguous prefix lists. */
export const MAX_CANDIDATES = 10;

const WHOLE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Run ids starting with `prefix`, sorted, at most `limit` of them (the caller asks one more than it lists). */
export type RunIdLookup = (prefix: string, limit: number) => Promise<readonly string[]>;

/** A prefix that names no single run: too short to be taken as one, or the start of several. */
export class RunIdPrefixError extends Error {
  override readonly name = 'RunIdPrefixError';
  constructor(
    message: string,
    readonly candidates: readonly string[],
  ) {
    super(message);
  }
}

/** The matches a lookup asks for: one more than are listed, to tell "10" from "more than 10". */
export const LOOKUP_LIMIT = MAX_CANDIDATES + 1;

/** Ids of `ids` starting with `prefix`, sorted, at most `limit`: a lookup over ids held in memory (the board's runs). */
export function idsStartingWith(ids: Iterable<string>, prefix: string, limit = LOOKUP_LIMIT): string[] {
  const matches: string[] = [];
  for (const id of ids) if (id.startsWith(prefix)) matches.push(id);
  return matches.sort().slice(0, limit);
}

/**
 * The whole id `input` names, given the ids that start with it (sorted, as a lookup answers): itself
 * when a run has exactly that id, else its one match; null when no run has or starts with it (the
 * caller answers as for an unknown id). Refuses a prefix under MIN_PREFIX characters that starts some
 * runs, and one that starts several, listing them.
 */
export function pickRun(input: string, matches: readonly string[]): string | null {
  if (matches.includes(input)) return input;
  if (matches.length === 0) return null;
  if (input.length < MIN_PREFIX) {
    throw new RunIdPrefixError(`a run id prefix needs at least ${MIN_PREFIX} characters: "${input}" is no run's whole id`, []);
  }
  if (matches.length === 1) return matches[0]!;
  const count = matches.length > MAX_CANDIDATES ? `more than ${MAX_CANDIDATES}` : String(matches.length);
  const listed = matches.slice(0, MAX_CANDIDATES);
  throw new RunIdPrefixError(`${input} is ambiguous: it starts ${count} runs: ${listed.join(', ')}`, listed);
}

/** Refuses what could not start a run id, naming the rule. */
export function checkRunIdPrefix(input: string): void {
  if (!isSafeId(input)) throw new Error(`${JSON.stringify(input)} is not a run id or a prefix of one: ids match ${SAFE_ID_RULE}`);
}

/**
 * The whole run id `input` names (see pickRun), asking `lookup` only when it is not a whole UUID
 * already; null when no run has or starts with it.
 */
export async function resolveRunId(input: string, lookup: RunIdLookup): Promise<string | null> {
  checkRunIdPrefix(input);
  if (WHOLE_UUID.test(input)) return input;
  return pickRun(input, await lookup(input, LOOKUP_LIMIT));
}

/** The same among ids held in memory (the web view reads the board's runs). */
export function resolveRunIdAmong(input: string, ids: Iterable<string>): string | null {
  checkRunIdPrefix(input);
  if (WHOLE_UUID.test(input)) return input;
  return pickRun(input, idsStartingWith(ids, input));
}

/** What a command says when no run has or starts with `input`. */
export function noRunStartsWith(input: string): string {
  return `no run starts with ${input}`;
}
