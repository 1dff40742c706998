import type { z } from 'zod';
import type { EventDefinition } from './define.ts';
import { type NewEvent, STREAM_NAME, type StoredEvent } from './envelope.ts';

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

type Definitions = Readonly<Record<string, EventDefinition>>;

/** Validates event data against the catalog on the way in and on the way out, upcasting old shapes. */
export class EventCodec<Defs extends Definitions> {
  constructor(readonly definitions: Defs) {}

  has(type: string): type is keyof Defs & string {
    return Object.hasOwn(this.definitions, type);
  }

  /** The current shape of `raw` as data of `type`, upcast from a legacy shape when it has one. */
  decodeData(seq: number | null, type: string, raw: unknown): unknown {
    const definition = this.definitions[type];
    if (!definition) throw new InvalidEventError(seq, type, 'unknown event type (is this log from a newer runledger?)');
    const current = definition.schema.safeParse(raw);
    if (current.success) return current.data;
    for (const legacy of definition.legacy) {
      const old = legacy.schema.safeParse(raw);
      if (!old.success) continue;
      const upcast = definition.schema.safeParse(legacy.upcast(old.data as never));
      if (upcast.success) return upcast.data;
    }
    throw new InvalidEventError(seq, type, describeIssues(current.error));
  }

  /** A row read from the log, as text columns, into a validated event. */
  decodeRow(row: EventRow): StoredEvent {
    let raw: unknown;
    try {
      raw = JSON.parse(row.data);
    } catch (error) {
      throw new InvalidEventError(row.seq, row.type, `data is not JSON (${(error as Error).message})`);
    }
    return {
      seq: row.seq,
      stream: row.stream,
      version: row.version,
      type: row.type,
      data: this.decodeData(row.seq, row.type, raw),
      at: row.at,
      cause: row.cause,
      actor: row.actor,
    };
  }

  /** Refuses an event before it is written, so the log only ever holds what it can read back. */
  checkNew(event: NewEvent): void {
    const definition = this.definitions[event.type];
    if (!definition) throw new InvalidEventError(null, event.type, 'unknown event type');
    const parsed = definition.schema.safeParse(event.data);
    if (!parsed.success) throw new InvalidEventError(null, event.type, describeIssues(parsed.error));
    if (!Number.isSafeInteger(event.at) || event.at < 0) throw new InvalidEventError(null, event.type, `bad at ${event.at}`);
    if (!STREAM_NAME.test(event.stream)) {
      throw new InvalidEventError(null, event.type, `stream name ${JSON.stringify(event.stream)} is not [owner/]kind:id with ids of ^[A-Za-z0-9-]{1,64}$`);
    }
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
