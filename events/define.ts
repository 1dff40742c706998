import type { z } from 'zod';

/**
 * One event type: its name, the schema of its data, and the older shapes it once had. Older shapes
 * are upcast on read and never rewritten in the log (docs/rules.md#the-log).
 */
export interface EventDefinition<T extends string = string, S extends z.ZodType = z.ZodType> {
  readonly type: T;
  readonly schema: S;
  /** Tried in order when a row does not match `schema`: the first that parses is upcast. */
  readonly legacy: readonly LegacyShape<S>[];
}

export interface LegacyShape<S extends z.ZodType> {
  readonly schema: z.ZodType;
  readonly upcast: (old: never) => z.input<S>;
}

/**
 * `schema` is built the first time it is read, not when the catalog is loaded: a command starts
 * with the catalog (the store checks every event it writes and reads), and building the schemas of
 * all its types cost each start ~80 ms of CPU, where a daemon's start writes and reads a few types.
 */
export function defineEvent<T extends string, S extends z.ZodType>(
  type: T,
  schema: () => S,
  legacy: readonly LegacyShape<S>[] = [],
): EventDefinition<T, S> {
  let built: S | undefined;
  return {
    type,
    get schema() {
      built ??= schema();
      return built;
    },
    legacy,
  };
}

/** Turns a list of definitions into a record keyed by type, keeping each literal type. */
export function eventGroup<const D extends readonly EventDefinition[]>(...definitions: D): { [K in D[number] as K['type']]: K } {
  return Object.fromEntries(definitions.map((d) => [d.type, d])) as never;
}
