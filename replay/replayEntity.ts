import type { AnyDecider } from '../actors/decider.ts';
import type { DomainEvent } from '../events/catalog.ts';
import type { AnyEventCodec } from '../events/codec.ts';
import { parseStream } from '../events/envelope.ts';
import type { EventStore } from '../runtime/store/eventStore.ts';
import { nearestDeciderStates, type ScopedStates, snapshotNameOf } from './deciderStates.ts';
import { complete, feed } from './feed.ts';
import { type DeciderStart, type ReplayDifference, Replayer, type ReplayStep } from './replayer.ts';

/** A gap of the log this long is skipped by loading a later snapshot rather than folded. */
const JUMP_MIN = 50_000;

export interface EntityReplay {
  readonly ok: boolean;
  readonly kind: 'run' | 'session';
  readonly id: string;
  /** How many events of the log concern it (its streams, and every event whose data names it). */
  readonly events: number;
  /** Each input that concerns it, or that led to a decision concerning it, re-decided. */
  readonly steps: readonly ReplayStep[];
  /** Its events that are neither such an input nor a decision of one (no decider takes them). */
  readonly undecided: readonly number[];
  /** The decider states the inputs were decided against, and where each fold started. */
  readonly scopes: readonly { readonly decider: string; readonly scope: string; readonly from: number }[];
  /** The stretch of the log folded, and the snapshots loaded on the way. */
  readonly folded: { readonly from: number; readonly to: number; readonly events: number; readonly snapshots: readonly number[] };
  readonly difference: ReplayDifference | null;
}

interface Target {
  readonly decider: AnyDecider;
  readonly scope: string;
}

/**
 * `replay --run ID` / `--session ID`: re-decides only the inputs that concern one run or session. A
 * decider's state depends on every event of its scope (the queue's covers the whole computer), so
 * each input is decided against its scope folded from the log up to it: from the nearest snapshot of
 * the deciders' states before the first input, folding only the scopes these inputs need, and
 * skipping ahead to a later snapshot across a long gap between two inputs.
 */
export async function replayEntity(
  store: Pick<EventStore, 'readAll' | 'readEntity' | 'snapshots'>,
  deciders: readonly AnyDecider[],
  kind: 'run' | 'session',
  id: string,
  options: { jumpMin?: number; onPage?: (seq: number) => void; codec?: AnyEventCodec } = {},
): Promise<EntityReplay | null> {
  const jumpMin = options.jumpMin ?? JUMP_MIN;
  const events = await store.readEntity(`${kind}:${id}`);
  if (events.length === 0) return null;
  const bySeq = new Map(events.map((e) => [e.seq, e]));
  const targets = new Map<number, Target>();
  const undecided: number[] = [];
  /** A message's decisions come in an append of their own, later: it is decided once the feed reaches the first. */
  const decidedAt = new Map<number, number>();
  for (const event of events) {
    const input = event.cause === null ? event : (bySeq.get(event.cause) ?? (await store.readAll(event.cause - 1, 1))[0]);
    // An input, or another actor's committed decision taken as one (a message: see Decider.messageScopeOf).
    const target = !input ? null : input.cause === null ? targetOf(deciders, input) : messageTargetOf(deciders, input);
    if (!input || !target) {
      undecided.push(event.seq);
      continue;
    }
    targets.set(input.seq, target);
    if (input.cause !== null) decidedAt.set(input.seq, Math.min(decidedAt.get(input.seq) ?? event.seq, event.seq));
  }
  const order = [...targets.keys()].sort((a, b) => a - b);
  const needed = new Map<AnyDecider, Set<string>>();
  for (const { decider, scope } of targets.values()) {
    const scopes = needed.get(decider) ?? new Set<string>();
    scopes.add(scope);
    needed.set(decider, scopes);
  }
  const snapshotSeqs = await snapshotSeqsOf(store, [...needed.keys()]);

  // A decider needed only for the entity's own streams (a run's execution) holds nothing before the
  // entity's first event (every event of those streams is one readEntity found): it starts there
  // empty, needing no snapshot of its own, so the fold starts at the others' nearest snapshot, not seq 0.
  const own = [...needed].filter(([, scopes]) => [...scopes].every((scope) => isOwnStream(scope, kind, id))).map(([d]) => d);
  const others = [...needed.keys()].map((d, i) => (own.includes(d) ? null : snapshotSeqs[i]!)).filter((x) => x !== null);
  const first = order[0] ?? 0;
  const startSeq = jumpTarget(others.length ? others : snapshotSeqs, Math.min(first, events[0]!.seq) - 1);
  const starts = await loadStarts(store, deciders, needed, startSeq, new Set(own));
  const replayer = new Replayer(deciders, {
    starts,
    ...(options.codec ? { codec: options.codec } : {}),
    only: { inputs: new Set(order), scopes: new Map(deciders.map((d) => [d, needed.get(d) ?? new Set<string>()])) },
  });
  const loaded = startSeq > 0 ? [startSeq] : [];
  const from = replayer.after;
  let to = from;
  let read = 0;
  for (const seq of order) {
    const until = decidedAt.get(seq) ?? seq;
    if (until <= replayer.lastSeq) continue;
    const jump = jumpTarget(snapshotSeqs, seq - 1);
    if (seq > replayer.lastSeq && jump > replayer.lastSeq + jumpMin) {
      replayer.jump(await loadStarts(store, deciders, needed, jump));
      loaded.push(jump);
    }
    const before = replayer.lastSeq;
    to = await feed(store, replayer, { until, ...(options.onPage ? { onPage: options.onPage } : {}) });
    read += Math.max(0, replayer.lastSeq - before);
  }
  to = Math.max(to, replayer.lastSeq);
  const whole = async (event: DomainEvent): Promise<DomainEvent> => bySeq.get(event.seq) ?? (await complete(store, event));
  const steps: ReplayStep[] = [];
  for (const step of replayer.steps) {
    const recorded: DomainEvent[] = [];
    for (const event of step.recorded) recorded.push(await whole(event));
    steps.push({ ...step, input: await whole(step.input), recorded });
  }
  const found = [...replayer.differences].sort((a, b) => a.seq - b.seq)[0] ?? null;
  const difference = found ? { ...found, input: await whole(found.input) } : null;
  return {
    ok: difference === null,
    kind,
    id,
    events: events.length,
    steps,
    undecided,
    scopes: [...needed].flatMap(([decider, scopes]) =>
      [...scopes].map((scope) => ({ decider: decider.name, scope, from: starts.get(decider)!.seq })),
    ),
    folded: { from, to, events: read, snapshots: loaded },
    difference,
  };
}

/** Whether a scope is a stream of the entity itself (`c1/run:r1` of run r1), whose every event readEntity returns. */
function isOwnStream(scope: string, kind: string, id: string): boolean {
  const stream = parseStream(scope);
  return stream.kind === kind && stream.id === id;
}

function messageTargetOf(deciders: readonly AnyDecider[], message: DomainEvent): Target | null {
  for (const decider of deciders) {
    const scope = decider.messageScopeOf?.(message) ?? null;
    if (scope !== null) return { decider, scope };
  }
  return null;
}

function targetOf(deciders: readonly AnyDecider[], input: DomainEvent): Target | null {
  for (const decider of deciders) {
    const scope = decider.scopeOf(input);
    if (scope !== null && decider.isInput(input)) return { decider, scope };
  }
  return null;
}

/** The seqs of the stored states of each needed decider, ascending. */
async function snapshotSeqsOf(store: Pick<EventStore, 'snapshots'>, needed: readonly AnyDecider[]): Promise<number[][]> {
  const list = await store.snapshots.list();
  return needed.map((decider) => {
    const name = snapshotNameOf(decider);
    return list
      .filter((s) => s.name === name)
      .map((s) => s.seq)
      .sort((a, b) => a - b);
  });
}

/** The latest seq at or before `seq` from which every needed decider can start (0: none). */
function jumpTarget(snapshotSeqs: readonly number[][], seq: number): number {
  let target = Number.POSITIVE_INFINITY;
  for (const seqs of snapshotSeqs) {
    let best = 0;
    for (const s of seqs) if (s <= seq) best = s;
    target = Math.min(target, best);
  }
  return Number.isFinite(target) ? target : 0;
}

/**
 * Each needed decider's states at `seq` (the snapshot there, or empty at 0 or for `emptyAtSeq`), keeping only the scopes
 * needed; every other decider starts there too, with nothing to fold.
 */
async function loadStarts(
  store: Pick<EventStore, 'snapshots'>,
  deciders: readonly AnyDecider[],
  needed: ReadonlyMap<AnyDecider, ReadonlySet<string>>,
  seq: number,
  emptyAtSeq: ReadonlySet<AnyDecider> = new Set(),
): Promise<Map<AnyDecider, DeciderStart>> {
  const starts = new Map<AnyDecider, DeciderStart>();
  for (const decider of deciders) {
    const scopes = needed.get(decider);
    if (!scopes || seq === 0 || emptyAtSeq.has(decider)) {
      starts.set(decider, { seq, states: {} });
      continue;
    }
    // The nearest one: deciders whose snapshots were taken apart each start from their own.
    const nearest = await nearestDeciderStates(store, decider, seq);
    if (!nearest) {
      starts.set(decider, { seq: 0, states: {} });
      continue;
    }
    const states: ScopedStates = {};
    for (const scope of scopes) if (Object.hasOwn(nearest.states, scope)) states[scope] = nearest.states[scope];
    starts.set(decider, { seq: nearest.seq, states });
  }
  return starts;
}
