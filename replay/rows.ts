import type { DomainEvent } from '../events/catalog.ts';
import { type AnyEventCodec, InvalidEventError, UNKNOWN_TYPE } from '../events/codec.ts';
import { messageOf } from '../events/thrown.ts';
import type { FoldRow } from '../runtime/store/eventStore.ts';

/** A codec's types, each by itself (see `typesOf`). */
export type TypeNames = ReadonlyMap<string, string>;

const typeNames = new WeakMap<AnyEventCodec, TypeNames>();

/**
 * The catalog's own spelling of each type. A type read from a row is a fresh string; the catalog's
 * is the one every `switch`, set and map of the deciders holds, so comparing with it is one check.
 */
export function typesOf(codec: AnyEventCodec): TypeNames {
  let types = typeNames.get(codec);
  if (!types) {
    types = new Map(Object.keys(codec.definitions).map((type) => [type, type]));
    typeNames.set(codec, types);
  }
  return types;
}

/**
 * A row as an event whose data is not read yet (`undefined`): the replayer parses it only when a
 * decider needs it. Without the log's bookkeeping (`version` 0, `actor` ''): `complete` reads them back
 * for a report. A row of a type this version does not know is refused, naming it.
 */
export function unread(row: FoldRow, types: TypeNames): DomainEvent {
  const type = types.get(row.type);
  // Replay vouches for the whole log: a type it cannot even name fails it here, whoever reads it.
  if (type === undefined) throw new InvalidEventError(row.seq, row.type, UNKNOWN_TYPE);
  return { seq: row.seq, stream: row.stream, version: 0, type, data: undefined, at: row.at, cause: row.cause, actor: '' } as unknown as DomainEvent;
}

/**
 * Sets the data of an event `unread` made (parsed, decoded, or the re-derived data it was found to
 * equal): the one place replay writes an event's data, which everywhere else is read-only.
 */
export function fillData(event: DomainEvent, data: unknown): void {
  (event as { data: unknown }).data = data;
}

/** The data of a row, parsed from JSON (not yet checked against the catalog). */
export function parseData(seq: number, type: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidEventError(seq, type, `data is not JSON (${messageOf(error)})`);
  }
}
