import type { DomainEvent } from '../../events/catalog.ts';
import { type AnyEventCodec, type DecodedData, describeForeignRow, type ForeignRow, InvalidEventError } from '../../events/codec.ts';
import type { StoredEvent } from '../../events/envelope.ts';
import { messageOf } from '../../events/thrown.ts';
import { deepFreeze, sharedAsIs } from './followLog.ts';

/** A row of `events` in its column order (docs/rules.md#the-log): what each store's reads hand the decoder. */
export type RawRow = [seq: number, stream: string, version: number, type: string, data: string, at: number, cause: number | null, actor: string];

/**
 * What a read does with a row this version cannot read (see ForeignRow): skip it and hand it here,
 * once per seq (the default writes one line to stderr), or `fail`: throw InvalidEventError naming
 * it (`replay`, `rebuild`: a tool that vouches for the whole log).
 */
export type ForeignRowPolicy = 'fail' | ((row: ForeignRow) => void);

/**
 * Raw rows into validated events, for every store: the one place where a row this version cannot
 * read is decided about (skipped and named once, or thrown).
 */
export class RowDecoder {
  private readonly foreignRows: ForeignRowPolicy;
  /** The foreign rows already handed on: each is named once, however often it is read past. */
  private readonly reported = new Set<number>();
  /**
   * The recent rows decoded, frozen, by seq, with the text and type they were decoded from: several
   * readers of one process read each new row (the closer's index, the board's chores, a lane's queue,
   * a run's actor), and a JSON parse and a schema check of each, each time, cost the embedded daemon
   * ~0.4 ms of CPU a run (bench/profileEmbedded.ts). Only rows near the head this store committed are
   * kept (`keepFrom`): a fold of a long log from its start keeps none.
   */
  private readonly recent = new Map<number, { readonly type: string; readonly text: string; readonly event: DomainEvent }>();
  private keptFrom = Number.POSITIVE_INFINITY;

  constructor(
    private readonly codec: AnyEventCodec,
    foreignRows: ForeignRowPolicy | undefined,
  ) {
    this.foreignRows = foreignRows ?? ((row) => process.stderr.write(`runledger: ${describeForeignRow(row)}: skipped\n`));
  }

  /** A raw row into a validated event, or null for a foreign row, skipped and named (or thrown). */
  decode(row: RawRow): DomainEvent | null {
    const [seq, stream, version, type, text, at, cause, actor] = row;
    const kept = this.recent.get(seq);
    // The same text of the same type decodes to the same data: the rest of the row is checked with it.
    if (kept && kept.text === text && kept.type === type && sameEnvelope(kept.event, row)) return kept.event;
    const decoded = this.readData(type, text);
    // The codec checked `data` against `type`'s schema; the compiler cannot pair the two strings.
    if (decoded.ok) {
      const event = { seq, stream, version, type, data: decoded.data, at, cause, actor } as DomainEvent;
      if (seq < this.keptFrom) return event;
      // Shared by every later reader of the row: frozen, so none can change it under another.
      this.recent.set(seq, { type, text, event: Object.freeze({ ...event, data: deepFreeze(decoded.data) }) as DomainEvent });
      return this.recent.get(seq)!.event;
    }
    if (this.foreignRows === 'fail') throw new InvalidEventError(seq, type, decoded.problem);
    if (!this.reported.has(seq)) {
      this.reported.add(seq);
      this.foreignRows({ seq, stream, type, problem: decoded.problem });
    }
    return null;
  }

  /** The first row of `rows` this version reads, decoded (the foreign ones before it skipped): for reads backwards from a stream's end. */
  decodeFirst(rows: Iterable<RawRow>): DomainEvent | null {
    for (const row of rows) {
      const event = this.decode(row);
      if (event) return event;
    }
    return null;
  }

  /**
   * An event this store just committed, with the text its row holds and its data as the catalog read
   * it when it was appended (`checkNew`): kept as if its row had been decoded, so that the readers of
   * a row just written (a run's queue, its session's closer) parse and check it no more (~0.3 ms of
   * the embedded daemon's CPU a run, bench/profileEmbedded.ts). The data is what decoding the row
   * would give: the schema's output, frozen, with what JSON does not keep (an undefined field) left out.
   * Returns the event kept (null when it is not, being too far behind the head): the schema's output
   * holds none of the writer's objects, so followers may share it as it is.
   */
  remember(event: StoredEvent, text: string, data: unknown): DomainEvent | null {
    if (event.seq < this.keptFrom) return null;
    const read = sharedAsIs(Object.freeze({ ...event, data: frozenAsRead(data) }) as DomainEvent);
    this.recent.set(event.seq, { type: event.type, text, event: read });
    return read;
  }

  /**
   * The store committed up to `seq`: rows from `RECENT` before it on are kept once decoded, older ones
   * are let go.
   */
  keepFrom(seq: number): void {
    this.keptFrom = Math.max(0, seq - RECENT);
    for (const kept of this.recent.keys()) {
      if (kept >= this.keptFrom) break;
      this.recent.delete(kept);
    }
  }

  decodeAll(rows: readonly RawRow[]): DomainEvent[] {
    const events: DomainEvent[] = [];
    for (const row of rows) {
      const event = this.decode(row);
      if (event) events.push(event);
    }
    return events;
  }

  private readData(type: string, text: string): DecodedData {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      return { ok: false, problem: `data is not JSON (${messageOf(error)})` };
    }
    return this.codec.tryDecodeData(type, raw);
  }
}

/** `value` as a row's JSON gives it back, frozen all the way down, in place: fields holding undefined dropped, -0 as 0. */
function frozenAsRead(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) value[i] = frozenAsRead(value[i]);
  else {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (record[key] === undefined) delete record[key];
      else record[key] = frozenAsRead(record[key]);
    }
  }
  return Object.freeze(value);
}

/** How many rows before the head a decoder keeps decoded (a few seconds of a busy daemon's appends). */
const RECENT = 2048;

function sameEnvelope(event: DomainEvent, [seq, stream, version, , , at, cause, actor]: RawRow): boolean {
  return (
    event.seq === seq && event.stream === stream && event.version === version && event.at === at && event.cause === cause && event.actor === actor
  );
}

/**
 * EventStore.readAll's page for either store, filled from the rows each store fetches in its own way
 * (`while (!page.take(fetch(page.last, page.wanted)));`, with or without an await): a foreign row
 * skipped leaves room in the page for the rows after it, so fewer than `limit` events still means
 * the log ends here.
 */
export class EventPage {
  readonly events: DomainEvent[] = [];
  /** The seq the next fetch reads after. */
  last: number;

  constructor(
    private readonly decoder: RowDecoder,
    after: number,
    private readonly limit: number,
  ) {
    this.last = after;
  }

  /** How many rows the next fetch asks for. */
  get wanted(): number {
    return this.limit - this.events.length;
  }

  /** Decodes the rows fetched for `wanted`; true once the page is full or the log has no more. */
  take(rows: readonly RawRow[]): boolean {
    const wanted = this.wanted;
    for (const row of rows) {
      const event = this.decoder.decode(row);
      if (event) this.events.push(event);
    }
    if (rows.length < wanted || this.events.length === this.limit) return true;
    this.last = rows[rows.length - 1]![0];
    return false;
  }
}

/**
 * The ids of `entityIdsStartingWith`, from the two ranges a store read (entity names of streams and
 * ids named in data): merged, text only, sorted, at most `limit`. Ids are of [A-Za-z0-9-], all below
 * `~`, so the range `[prefix, prefix~)` holds every id starting with `prefix`.
 */
export const ID_RANGE_END = '~';

export function mergeEntityIds(
  kind: string,
  prefix: string,
  limit: number,
  streamEntities: readonly string[],
  mentioned: readonly unknown[],
): string[] {
  const named = streamEntities.map((entity) => entity.slice(kind.length + 1));
  const ids = new Set([...named, ...mentioned.filter((id): id is string => typeof id === 'string')]);
  return [...ids]
    .filter((id) => id.startsWith(prefix))
    .sort()
    .slice(0, limit);
}
