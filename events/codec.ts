import type { z } from 'zod';
import type { EventDefinition } from './define.ts';
import { type NewEvent, STREAM_NAME } from './envelope.ts';
import { SAFE_ID_RULE } from './idRule.ts';

/** A row that cannot become an event of the catalog: names its seq and type, never crashes a reader. */
export class InvalidEventError extends Error {
  override readonly name = 'InvalidEventError';
  constructor(
    readonly seq: number | null,
    readonly type: string,
    readonly problem: string,
  ) {
    super(`${seq === null ? 'event' : `event seq ${seq}`} of type "${type}": ${problem}`);
  }
}

/**
 * A row of the log this version cannot read: a type it does not know (a newer runledger wrote it) or
 * a known type whose data does not have its shape. Readers skip it; who reads names it (docs/rules.md#the-log).
 */
export interface ForeignRow {
  readonly seq: number;
  readonly stream: string;
  readonly type: string;
  readonly problem: string;
}

/** The one sentence that names a foreign row, wherever it is reported. */
export function describeForeignRow(row: ForeignRow): string {
  return new InvalidEventError(row.seq, row.type, row.problem).message;
}

/** Why a row of a type this version does not know cannot be read. */
export const UNKNOWN_TYPE = 'unknown event type (is this log from a newer runledger?)';

type Definitions = Readonly<Record<string, EventDefinition>>;
/** Data of a row checked against its type: the current shape, or the problem. */
export type DecodedData = { readonly ok: true; readonly data: unknown } | { readonly ok: false; readonly problem: string };

/**
 * A codec of any catalog, as the store and `replay` take one: the production catalog's, or a test's
 * that adds its fixtures' events to it. (`has` is left out: its type guard would tie it to one catalog.)
 */
export type AnyEventCodec = Pick<EventCodec<Definitions>, 'definitions' | 'decodeData' | 'tryDecodeData' | 'checkNew'>;

/** Validates event data against the catalog on the way in and on the way out, upcasting old shapes. */
export class EventCodec<Defs extends Definitions> {
  constructor(readonly definitions: Defs) {}

  has(type: string): type is keyof Defs & string {
    return Object.hasOwn(this.definitions, type);
  }

  /** The current shape of `raw` as data of `type`, upcast from a legacy shape when it has one. */
  decodeData(seq: number | null, type: string, raw: unknown): unknown {
    const decoded = this.tryDecodeData(type, raw);
    if (!decoded.ok) throw new InvalidEventError(seq, type, decoded.problem);
    return decoded.data;
  }

  /** As `decodeData`, the problem returned instead of thrown: for a reader that skips what it cannot read. */
  tryDecodeData(type: string, raw: unknown): DecodedData {
    const definition = this.definitions[type];
    if (!definition) return { ok: false, problem: UNKNOWN_TYPE };
    const current = definition.schema.safeParse(raw);
    if (current.success) return { ok: true, data: current.data };
    for (const legacy of definition.legacy) {
      const old = legacy.schema.safeParse(raw);
      if (!old.success) continue;
      const upcast = definition.schema.safeParse(legacy.upcast(old.data as never));
      if (upcast.success) return { ok: true, data: upcast.data };
    }
    return { ok: false, problem: describeIssues(current.error) };
  }

  /**
   * Refuses an event before it is written, so the log only ever holds what it can read back; returns
   * its data as the catalog reads it (the schema's output: fresh objects, keys it does not know left out).
   */
  checkNew(event: NewEvent): unknown {
    const definition = this.definitions[event.type];
    if (!definition) throw new InvalidEventError(null, event.type, 'unknown event type');
    const parsed = definition.schema.safeParse(event.data);
    if (!parsed.success) throw new InvalidEventError(null, event.type, describeIssues(parsed.error));
    if (!Number.isSafeInteger(event.at) || event.at < 0) throw new InvalidEventError(null, event.type, `bad at ${event.at}`);
    if (!STREAM_NAME.test(event.stream)) {
      throw new InvalidEventError(null, event.type, `stream name ${JSON.stringify(event.stream)} is not [owner/]kind:id with ids of ${SAFE_ID_RULE}`);
    }
    return parsed.data;
  }
}

export interface EventRow {
  seq: number;
  stream: string;
  version: number;
  type: string;
  data: string;
  at: number;
  cause: number | null;
  actor: string;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : 'data'}: ${issue.message}`)
    .join('; ');
}
