import type { DomainEvent } from '../events/catalog.ts';
import { type OutboxMark, settles } from './outboxMark.ts';

/**
 * What an outbox knows of its effects, folded from what it reads and writes (the outbox's runner,
 * runtime/actors/outbox.ts, does the reading, the writing and the waiting): no I/O here, and no clock.
 * The log is the truth; this is one process's view of it, as of `version` of the outbox's stream.
 */
export interface Ledger {
  /** The version of the outbox's stream this process last saw: the version its next take expects. */
  readonly version: number;
  /**
   * Every event up to it was taken, or read and found to call for nothing here. It moves forward only:
   * another process's take may end below it (its page was read earlier), and going back would read all that again.
   */
  readonly cursor: number;
  /**
   * With implicit takes: the effects up to the cursor that nothing has settled yet, each with the seq of its
   * take (the effect itself, or an older version's `outbox.taken`) and what it is about (null when this
   * version cannot read it). Empty with explicit takes: their leftovers are read from the mark on opening.
   */
  readonly pending: ReadonlyMap<number, PendingEffect>;
  /**
   * The stream version of this process's first take. A take by its own writer below it was made by an
   * earlier process that had the same `host:pid` (a container's pid 1 after a restart): that one is gone.
   */
  readonly firstOwnTake: number;
  /** With implicit takes: where this life began. An effect its writer committed after it is this process's own. */
  readonly lifeFrom: number;
  /** The mark last saved, or read on opening. */
  readonly marked: OutboxMark;
}

export interface PendingEffect {
  readonly key: string | null;
  readonly take: number;
}

/** What moves a ledger on. */
export type LedgerEvent =
  /**
   * Opened (or opened again) at `mark`, the outbox's stream folded up to now; `pending` read from it with
   * implicit takes, and where this life began. The cursor does not go back, and this process's takes stay its own.
   */
  | { readonly kind: 'opened'; readonly mark: OutboxMark; readonly pending?: ReadonlyMap<number, PendingEffect>; readonly lifeFrom?: number }
  /** An event of the outbox's stream read back from the log (another process's, or this one's). */
  | { readonly kind: 'read'; readonly event: DomainEvent }
  /** A take this process appended, once committed. */
  | { readonly kind: 'took'; readonly event: DomainEvent }
  /** A record this process appended (an effect's end, or an interruption), once committed. */
  | { readonly kind: 'recorded'; readonly event: DomainEvent }
  /** Settled by this process with nothing written (its answer was recorded, or its record was). */
  | { readonly kind: 'settled'; readonly effect: number }
  /** Read past: every event up to `through` was taken or calls for nothing here. */
  | { readonly kind: 'past'; readonly through: number }
  /**
   * With implicit takes, an event of the log read at the cursor: `effect` is the key of the effect it
   * calls for (undefined when it calls for none), `settles` the key of the effects before it that it answers.
   */
  | { readonly kind: 'decided'; readonly seq: number; readonly effect?: string; readonly settles: string | null }
  /** A mark saved. */
  | { readonly kind: 'marked'; readonly mark: OutboxMark };

/**
 * How far the cursor moves between two saves of the outbox's mark: a start re-reads at most about this
 * many events for it, and a daemon saves one mark an outbox every this many events. A crash restart
 * opens six outboxes: at 5,000 each re-read up to 5,000 events of a busy life before serving.
 */
export const MARK_EVERY = 1_000;

const NO_MARK: OutboxMark = { version: 0, cursor: 0, pending: {} };

/** The ledger of an outbox not opened yet. */
export const emptyLedger: Ledger = {
  version: 0,
  cursor: 0,
  pending: new Map(),
  firstOwnTake: Number.POSITIVE_INFINITY,
  lifeFrom: 0,
  marked: NO_MARK,
};

export function evolveLedger(ledger: Ledger, event: LedgerEvent): Ledger {
  switch (event.kind) {
    case 'opened':
      return {
        ...ledger,
        version: event.mark.version,
        cursor: Math.max(ledger.cursor, event.mark.cursor),
        pending: event.pending ?? new Map(),
        lifeFrom: event.lifeFrom ?? ledger.lifeFrom,
        marked: event.mark,
      };
    case 'read':
      return settledBy({ ...ledger, version: event.event.version, cursor: takenThrough(ledger.cursor, event.event) }, event.event);
    case 'took':
      return {
        ...ledger,
        version: event.event.version,
        cursor: takenThrough(ledger.cursor, event.event),
        firstOwnTake: Math.min(ledger.firstOwnTake, event.event.version),
      };
    case 'recorded':
      // Only a record that directly follows what this process saw keeps its view current; otherwise
      // another process wrote in between, and the next take must fail and reload rather than skip it.
      return settledBy(event.event.version === ledger.version + 1 ? { ...ledger, version: event.event.version } : ledger, event.event);
    case 'settled':
      return settled(ledger, event.effect);
    case 'past':
      return event.through > ledger.cursor ? withCursor(ledger, event.through) : ledger;
    case 'decided':
      return decided(ledger, event.seq, event.effect, event.settles);
    case 'marked':
      return { ...ledger, marked: event.mark };
  }
}

/** Spelled out rather than spread: every follower steps past every event, and this is its cost. */
function withCursor(ledger: Ledger, cursor: number): Ledger {
  const { version, pending, firstOwnTake, lifeFrom, marked } = ledger;
  return { version, cursor, pending, firstOwnTake, lifeFrom, marked };
}

function takenThrough(cursor: number, event: DomainEvent): number {
  return event.type === 'outbox.taken' ? Math.max(cursor, event.data.through) : cursor;
}

/** An event of the outbox's stream that settles an effect: it is no longer pending. */
function settledBy(ledger: Ledger, event: DomainEvent): Ledger {
  return settles(event) ? settled(ledger, event.data.effect) : ledger;
}

function settled(ledger: Ledger, effect: number): Ledger {
  if (!ledger.pending.has(effect)) return ledger;
  const pending = new Map(ledger.pending);
  pending.delete(effect);
  return { ...ledger, pending };
}

function decided(ledger: Ledger, seq: number, effect: string | undefined, settles: string | null): Ledger {
  let pending: Map<number, PendingEffect> | null = null;
  if (settles !== null) {
    for (const [pendingSeq, { key }] of ledger.pending) {
      if (key !== settles || pendingSeq >= seq) continue;
      pending ??= new Map(ledger.pending);
      pending.delete(pendingSeq);
    }
  }
  if (effect !== undefined) (pending ??= new Map(ledger.pending)).set(seq, { key: effect, take: seq });
  return pending ? { ...ledger, pending } : ledger;
}

/** Whether the cursor moved far enough past the mark for a save (MARK_EVERY), or at all (`any`: a save by time, or at a stop). */
export function markDue(ledger: Ledger, any = false): boolean {
  const ahead = ledger.cursor - ledger.marked.cursor;
  return any ? ahead > 0 : ahead >= MARK_EVERY;
}

/** The mark of an outbox with implicit takes: what is pending is known in memory, up to the cursor. */
export function implicitMark(ledger: Ledger): OutboxMark {
  const pending = Object.fromEntries([...ledger.pending].map(([effect, { take }]) => [String(effect), take]));
  return { version: ledger.version, cursor: ledger.cursor, pending };
}

/** With implicit takes: whether an effect the log holds is this life's own to perform. */
export function isOwn(ledger: Ledger, event: DomainEvent, writer: string): boolean {
  return event.actor === writer && event.seq > ledger.lifeFrom;
}

/** The lease a take was made under or one held now, as far as these decisions go. */
export interface Epoch {
  readonly epoch: number;
  readonly holder: string;
}

/** Who a take belongs to, as far as the ledger can say: 'probe' asks whether its writer's process still runs. */
export type Taker = 'gone' | 'here' | 'probe';

/**
 * Whether the taker of an effect left it for good, so the next life settles it. `take` is the take (an
 * `outbox.taken`, or the effect itself with implicit takes); `held` the lease held now, if the outbox
 * has one; `performing` whether this process performs the effect now (it took it under its lease).
 */
export function takerOf(
  ledger: Ledger,
  take: DomainEvent,
  context: { readonly writer: string; readonly implicit: boolean; readonly held: Epoch | null | undefined; readonly performing: boolean },
): Taker {
  const epoch = take.type === 'outbox.taken' ? take.data.epoch : undefined;
  const { held } = context;
  if (held && epoch !== undefined) {
    // Not holding the lease now, this process could record nothing anyway: the holder will (EpochTakes).
    if (held.epoch === 0) return 'here';
    return held.epoch !== epoch || !context.performing ? 'gone' : 'here';
  }
  // Implicit takes before this life (and an older version's takes then) by this writer are an earlier process's of the same `host:pid`.
  if (take.actor === context.writer) {
    const earlier = context.implicit ? take.seq <= ledger.lifeFrom : take.version < ledger.firstOwnTake;
    return earlier ? 'gone' : 'here';
  }
  return 'probe';
}

/**
 * What a restart does with an effect whose taker is gone: performs an at-least-once one again (unless
 * this version cannot read it: it stays taken for a version that can), records an at-most-once one
 * interrupted.
 */
export function settlementOf(delivery: 'at-least-once' | 'at-most-once', readable: boolean): 'perform' | 'keep' | 'interrupt' {
  if (delivery === 'at-most-once') return 'interrupt';
  return readable ? 'perform' : 'keep';
}

/** Whether an effect taken under `taken` may still be started, with `held` the lease held now (EpochTakes). */
export function mayStartUnder(taken: Epoch | undefined, held: Epoch | null | undefined): boolean {
  if (!taken) return true;
  return held?.epoch === taken.epoch && held.holder === taken.holder;
}

/**
 * What the record of an effect taken under `taken` waits for (EpochTakes): it is appended while its
 * epoch is held, waited for while none is (the epoch may come back), given up once another is.
 */
export function recordUnder(taken: Epoch, held: Epoch | null | undefined): 'append' | 'wait' | 'give up' {
  if (held && held.epoch > 0 && held.epoch !== taken.epoch) return 'give up';
  return held?.epoch === taken.epoch ? 'append' : 'wait';
}
