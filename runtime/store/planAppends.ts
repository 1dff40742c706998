import type { AnyEventCodec } from '../../events/codec.ts';
import type { NewEvent, StoredEvent } from '../../events/envelope.ts';
import { type AppendLease, type AppendRequest, type AppendResult, StaleVersionError } from './eventStore.ts';

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
  /** The lease rows as the transaction sees them (see AppendLease), or none when the store checks no lease. */
  leases: ReadonlyMap<string, LeaseRow> | null = null,
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
    const lost = leases && request.lease ? leaseLost(request.lease, leases.get(request.lease.name)) : null;
    if (lost !== null) {
      chain?.chain.breakAt(chain.link);
      const [stream = '', expected] = Object.entries(request.expected)[0] ?? [];
      const version = currentVersion(stream);
      return { ok: false, conflict: new StaleVersionError(stream, typeof expected === 'number' ? expected : version, version, lost, false, true) };
    }
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

/** A lease row as an append transaction reads it: `live` when it had not expired at that moment (the database's clock). */
export interface LeaseRow {
  readonly holder: string;
  readonly epoch: number;
  readonly live: boolean;
}

/** Why `lease` is not held according to `row` (null: it is). */
function leaseLost(lease: AppendLease, row: LeaseRow | undefined): string | null {
  if (row === undefined) return `the lease ${lease.name} was never taken: nothing was written`;
  if (row.holder !== lease.holder || row.epoch !== lease.epoch)
    return `the lease ${lease.name} is held by ${row.holder} at epoch ${row.epoch}, not by ${lease.holder} at epoch ${lease.epoch}: nothing was written`;
  if (!row.live) return `the lease ${lease.name} of ${lease.holder} (epoch ${lease.epoch}) expired before this append: nothing was written`;
  return null;
}

/** The lease names a batch's requests carry (see AppendLease): none when no request has one. */
export function leasesOf(requests: readonly AppendRequest[]): string[] {
  return [...new Set(requests.flatMap((r) => (r.lease ? [r.lease.name] : [])))];
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
 * Returns each event's data as the catalog reads it (`checkNew`).
 */
export function checkRequest(codec: Pick<AnyEventCodec, 'checkNew'>, request: AppendRequest): unknown[] {
  return request.events.map((event, index) => {
    if (!Object.hasOwn(request.expected, event.stream)) throw new Error(`append to ${event.stream} names no expected version for it`);
    const cause = event.cause;
    if (cause && typeof cause === 'object' && !(cause.inBatch >= 0 && cause.inBatch < index)) {
      throw new Error(`event ${index} of an append names event ${cause.inBatch} of it as its cause: only earlier ones can be`);
    }
    return codec.checkNew(event);
  });
}
