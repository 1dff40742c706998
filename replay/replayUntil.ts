import type { AnyDecider } from '../actors/decider.ts';
import type { AnyEventCodec } from '../events/codec.ts';
import type { AnyProjection } from '../projections/projection.ts';
import { foldInto, nearestStates, type Positioned } from '../runtime/folds/snapshot/nearestStates.ts';
import type { EventStore } from '../runtime/store/eventStore.ts';
import { type Alias, aliasOf, nearestDeciderStates } from './deciderStates.ts';
import { complete, feed } from './feed.ts';
import { type DeciderStart, type ReplayDifference, Replayer } from './replayer.ts';

export interface StartedFrom {
  readonly name: string;
  /** The seq of the snapshot it started from; 0 with `from: 'initial'`. */
  readonly seq: number;
  readonly from: 'snapshot' | 'initial';
}

export interface UntilReport {
  readonly ok: boolean;
  readonly until: number;
  /** The last seq of the log at or before `until`. */
  readonly lastSeq: number;
  /** What was re-decided and compared: the inputs after `verifiedFrom`, up to `until`. */
  readonly verifiedFrom: number;
  readonly inputs: number;
  readonly decisions: number;
  /** Events read from the log: from the earliest start to `until`. */
  readonly folded: number;
  readonly projectionsFrom: readonly StartedFrom[];
  readonly decidersFrom: readonly StartedFrom[];
  readonly projections: Record<string, unknown>;
  readonly difference: ReplayDifference | null;
}

/**
 * `replay --until SEQ`: every projection as of SEQ, each from its nearest snapshot at or before it;
 * and the decisions of the stretch folded re-derived and compared, from the deciders' nearest
 * snapshot on (a full `replay` verifies everything before it). One pass over the log serves both.
 */
export async function replayUntil(
  store: Pick<EventStore, 'readAll' | 'snapshots'>,
  deciders: readonly AnyDecider[],
  projections: readonly AnyProjection[],
  until: number,
  options: { onPage?: (seq: number) => void; codec?: AnyEventCodec } = {},
): Promise<UntilReport> {
  const positioned = await nearestStates(store, projections, until);
  // The queue's and the board's decider states are those projections: read once, folded once, by the
  // replayer; the projection takes its state back at the end. Unless `until` cuts an append: the rest
  // of it is folded into the deciders' states only, so those are then read on their own.
  const [next] = await store.readAll(until, 1);
  const cut = next !== undefined && next.cause !== null;
  const shared: { readonly decider: AnyDecider; readonly alias: Alias; readonly at: Positioned }[] = [];
  const starts = new Map<AnyDecider, DeciderStart>();
  for (const decider of deciders) {
    const alias = cut ? null : aliasOf(decider);
    const at = alias && positioned.find((p) => p.projection === alias.projection);
    if (alias && at) {
      shared.push({ decider, alias, at });
      starts.set(decider, { seq: at.seq, states: alias.states(at.state) });
    } else {
      starts.set(decider, (await nearestDeciderStates(store, decider, until)) ?? { seq: 0, states: {} });
    }
  }
  const own = positioned.filter((p) => !shared.some((s) => s.at === p));
  // Not stopped at a difference: the projections are printed as of `until` all the same.
  const replayer = new Replayer(deciders, { starts, ...(options.codec ? { codec: options.codec } : {}) });
  const from = Math.min(replayer.after, ...positioned.map((p) => p.seq));
  const lastSeq = await feed(store, replayer, {
    from,
    until,
    visit: (event) => foldInto(own, event),
    ...(options.onPage ? { onPage: options.onPage } : {}),
  });
  for (const { decider, alias, at } of shared) {
    at.state = alias.state(replayer.statesOf(decider));
    at.seq = Math.max(at.seq, lastSeq);
  }
  const found = replayer.firstDifference;
  const difference = found ? { ...found, input: await complete(store, found.input) } : null;
  const startOf = (p: (typeof positioned)[number]): StartedFrom => ({ name: p.projection.name, seq: p.start.seq, from: p.start.from });
  return {
    ok: difference === null,
    until,
    lastSeq,
    verifiedFrom: replayer.after,
    inputs: replayer.inputs,
    decisions: replayer.decisions,
    folded: Math.max(0, lastSeq - from),
    projectionsFrom: positioned.map(startOf),
    decidersFrom: deciders.map((d) => ({ name: d.name, seq: starts.get(d)!.seq, from: starts.get(d)!.seq > 0 ? 'snapshot' : 'initial' })),
    projections: Object.fromEntries(positioned.map((p) => [p.projection.name, p.state])),
    difference,
  };
}
