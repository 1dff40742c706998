import type { z } from 'zod';
import { type DomainEvent, type EventType, eventDefinitions, type NewDomainEvent } from '../events/catalog.ts';
import { addedLaterKeys, isReasonCode, wordingKeys } from '../events/replayFields.ts';

/** A decision as compared: what was decided, about which stream, at what time. */
export interface DecisionView {
  readonly seq?: number;
  readonly stream: string;
  readonly type: string;
  readonly data: unknown;
  readonly at: number;
}

export function view(event: NewDomainEvent | DomainEvent): DecisionView {
  return { ...('seq' in event ? { seq: event.seq } : {}), stream: event.stream, type: event.type, data: event.data, at: event.at };
}

/** A recorded decision and a re-derived one agree on stream, type, time and what the data decides. */
export function sameDecision(recorded: DomainEvent, derived: NewDomainEvent): boolean {
  if (recorded.type !== derived.type || recorded.at !== derived.at || recorded.stream !== derived.stream) return false;
  const [r, d] = decidedParts(recorded.type, recorded.data, withoutLaterFields(recorded, derived.data));
  return sameJson(r, d);
}

/** The wording fields of an event type of the catalog (see replayFields.ts). */
const wordingKeysOf = keysOfEachType(wordingKeys);

/**
 * What `keysOf` finds in an event type's schema, found when the type is first compared: the catalog
 * builds a type's schema when it is first read (events/define.ts), and replay reads a log's types only.
 */
function keysOfEachType(keysOf: (schema: z.ZodType) => readonly string[]): (type: string) => readonly string[] {
  const found = new Map<string, readonly string[]>();
  return (type) => {
    let keys = found.get(type);
    if (keys === undefined) {
      keys = Object.hasOwn(eventDefinitions, type) ? keysOf(eventDefinitions[type as EventType].schema) : [];
      found.set(type, keys);
    }
    return keys;
  };
}

/**
 * Both sides of a decision as replay compares them, its wording set aside (docs/replay-and-audit.md#what-replay-compares):
 * a recorded sentence is not compared (nor is whatever is re-derived in its place); a recorded reason
 * code is compared on its code alone, its parameters being what the audit words it from.
 */
export function decidedParts(type: string, recorded: unknown, derived: unknown): [unknown, unknown] {
  const keys = wordingKeysOf(type);
  if (keys.length === 0 || !isPlainObject(recorded) || !isPlainObject(derived)) return [recorded, derived];
  const r: Record<string, unknown> = { ...recorded };
  const d: Record<string, unknown> = { ...derived };
  for (const key of keys) {
    const said = recorded[key];
    if (isReasonCode(said)) {
      r[key] = said.code;
      d[key] = isReasonCode(derived[key]) ? derived[key].code : { words: derived[key] };
    } else {
      delete r[key];
      delete d[key];
    }
  }
  return [r, d];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The fields marked as added later (see replayFields.ts) of an event type of the catalog. */
const laterKeysOf = keysOfEachType(addedLaterKeys);

/** A re-derived decision without the fields added later that the recorded one lacks: those it was decided without. */
function withoutLaterFields(recorded: DomainEvent, derived: unknown): unknown {
  const later = laterKeysOf(recorded.type).filter((field) => !Object.hasOwn(recorded.data, field));
  if (later.length === 0 || typeof derived !== 'object' || derived === null) return derived;
  const rest: Record<string, unknown> = { ...derived };
  for (const field of later) delete rest[field];
  return rest;
}

/**
 * `recorded` (read back from the log, so plain JSON) equals `derived` once written: a field the
 * decider left `undefined` is absent from the log, an `undefined` in an array reads back as null.
 * Compares without a JSON round trip of either side: replay asks this of every decision in the log.
 */
export function sameJson(recorded: unknown, derived: unknown): boolean {
  if (recorded === derived) return true;
  if (typeof derived === 'number') return !Number.isFinite(derived) && recorded === null;
  if (typeof derived !== 'object' || derived === null || typeof recorded !== 'object' || recorded === null) return false;
  if (Array.isArray(derived)) {
    if (!Array.isArray(recorded) || recorded.length !== derived.length) return false;
    for (let i = 0; i < derived.length; i++) {
      const d = derived[i];
      if (d === undefined ? recorded[i] !== null : !sameJson(recorded[i], d)) return false;
    }
    return true;
  }
  if (Array.isArray(recorded)) return false;
  if ('toJSON' in derived && typeof derived.toJSON === 'function') return sameJson(recorded, JSON.parse(JSON.stringify(derived)));
  // Two plain objects, read by their own keys (an \`object\` has no index signature to read them by).
  let fields = 0;
  for (const key in derived) {
    if (!Object.hasOwn(derived, key)) continue;
    const d = (derived as Record<string, unknown>)[key];
    if (d === undefined || typeof d === 'function') continue;
    fields++;
    if (!Object.hasOwn(recorded, key) || !sameJson((recorded as Record<string, unknown>)[key], d)) return false;
  }
  return Object.keys(recorded).length === fields;
}

/** The path of the first value that differs, with both values, for a report a person can act on. */
export function whereTheyDiffer(recorded: DecisionView | undefined, derived: DecisionView | undefined): string {
  if (!recorded) return `no decision recorded here; re-derived ${derived!.type} in ${derived!.stream}`;
  if (!derived) return `recorded ${recorded.type} in ${recorded.stream}, but nothing is re-derived here`;
  for (const field of ['type', 'stream', 'at'] as const) {
    if (recorded[field] !== derived[field])
      return `${field}: recorded ${JSON.stringify(recorded[field])}, re-derived ${JSON.stringify(derived[field])}`;
  }
  const [r, d] = decidedParts(recorded.type, recorded.data, normalise(derived.data));
  return dataPath(r, d, 'data') ?? 'data: equal once written';
}

function dataPath(recorded: unknown, derived: unknown, path: string): string | null {
  if (sameJson(recorded, derived)) return null;
  if (recorded && derived && typeof recorded === 'object' && typeof derived === 'object' && Array.isArray(recorded) === Array.isArray(derived)) {
    const keys = new Set([...Object.keys(recorded), ...Object.keys(derived)]);
    for (const key of keys) {
      const inner = dataPath((recorded as Record<string, unknown>)[key], (derived as Record<string, unknown>)[key], `${path}.${key}`);
      if (inner) return inner;
    }
  }
  return `${path}: recorded ${brief(recorded)}, re-derived ${brief(derived)}`;
}

function normalise(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

function brief(value: unknown): string {
  if (value === undefined) return '(absent)';
  const text = JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}
