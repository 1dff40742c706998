import type { AnyEventCodec } from '../codec.ts';
import type { NewEvent, StoredEvent } from '../envelope.ts';
import { type AppendRequest, type AppendResult, StaleVersionError } from './eventStore.ts';

/**
 * What a batch of appends writes, decided inside the store's write transaction from the log's head and
 * each stream's version as the transaction sees them (under the write lock, so nobody moves them): each
 * request is checked whole before any of its rows is planned, a stale one (or one whose chain broke)
 * plans nothing and the others go on; the planned rows take consecutive seqs after `head`.
 */
export function planAppends(
  head: number,
  versionOf: (stream: string) => number,
  writer: string,
  requests: readonly AppendRequest[],
  /** Events of other writers that break a request's guard (see AppendGuard), or none when the store checks no guard. */
  foreign: readonly GuardRow[] = [],
): { results: AppendResult[]; rows: StoredEvent[] } {
  const versions = new Map<string, number>();
  const currentVersion = (stream: string): number => {
    let version = versions.get(stream);
    if (version === undefined) {
      version = versionOf(stream);
      versions.set(stream, version);
    }
    return version;
  };
  const rows: StoredEvent[] = [];
  const results = requests.map((request): AppendResult => {
    const chain = request.chain;
    if (chain && !chain.chain.holds(chain.link)) return { ok: false, conflict: StaleVersionError.afterBrokenChain(request) };
    const breaking = request.guard ? foreign.find((row) => row.seq > request.guard!.after && request.guard!.kinds.includes(row.kind)) : undefined;
    if (breaking) {
      chain?.chain.breakAt(chain.link);
      const version = currentVersion(breaking.stream);
      return {
        ok: false,
        conflict: new StaleVersionError(
          breaking.stream,
          version,
          version,
          `another writer appended to ${breaking.stream} at seq ${breaking.seq}, after the state this was decided on (through seq ${request.guard!.after}): nothing was written`,
        ),
      };
    }
    for (const [stream, expected] of Object.entries(request.expected)) {
      const actual = currentVersion(stream);
      if (expected !== 'any' && expected !== actual) {
        chain?.chain.breakAt(chain.link);
        return { ok: false, conflict: new StaleVersionError(stream, expected, actual) };
      }
    }
    const stored: StoredEvent[] = [];
    for (const event of request.events) {
      const seq = ++head;
      const version = currentVersion(event.stream) + 1;
      versions.set(event.stream, version);
      const cause = resolveCause(event.cause, stored);
      stored.push({ seq, stream: event.stream, version, type: event.type, data: event.data, at: event.at, cause, actor: writer });
    }
    rows.push(...stored);
    return { ok: true, events: stored };
  });
  return { results, rows };
}

function resolveCause(cause: NewEvent['cause'], earlier: readonly StoredEvent[]): number | null {
  if (cause === undefined || cause === null) return null;
  if (typeof cause === 'number') return cause;
  const target = earlier[cause.inBatch];
  if (!target) throw new Error(`cause refers to event ${cause.inBatch} of its append, which comes later or does not exist`);
  return target.seq;
}

/** An event of another writer in a guarded kind (see AppendGuard): its seq, stream and the stream's kind. */
export interface GuardRow {
  readonly seq: number;
  readonly stream: string;
  readonly kind: string;
}

/** The lowest `after` and every kind the batch's guards name, or null when none has a guard. */
export function guardsOf(requests: readonly AppendRequest[]): { after: number; kinds: string[] } | null {
  let after = Number.POSITIVE_INFINITY;
  const kinds = new Set<string>();
  for (const { guard } of requests) {
    if (!guard) continue;
    after = Math.min(after, guard.after);
    for (const kind of guard.kinds) kinds.add(kind);
  }
  return kinds.size ? { after, kinds: [...kinds] } : null;
}

/** Every stream a batch names (its expected versions; each event's stream is among them): read once each. */
export function streamsOf(requests: readonly AppendRequest[]): string[] {
  const streams = new Set<string>();
  for (const request of requests) for (const stream of Object.keys(request.expected)) streams.add(stream);
  return [...streams];
}

/**
 * Refuses, before it is queued, an append that could never be written as asked: an event of a stream
 * it names no expected version for, a cause naming a later event of it, an event the catalog refuses.
 */
export function checkRequest(codec: Pick<AnyEventCodec, 'checkNew'>, request: AppendRequest): void {
  request.events.forEach((event, index) => {
    if (!Object.hasOwn(request.expected, event.stream)) throw new Error(`append to ${event.stream} names no expected version for it`);
    const cause = event.cause;
    if (cause && typeof cause === 'object' && !(cause.inBatch >= 0 && cause.inBatch < index)) {
      throw new Error(`event ${index} of an append names event ${cause.inBatch} of it as its cause: only earlier ones can be`);
    }
    codec.checkNew(event);
  });
}
