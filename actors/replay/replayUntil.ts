import type { EventStore } from '../../events/store/eventStore.ts';
import type { AnyProjection } from '../../projections/projection.ts';
import { foldInto, nearestStates } from '../../projections/snapshot/nearestStates.ts';
import type { AnyDecider } from '../decider.ts';
import { nearestDeciderStates } from './deciderStates.ts';
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
  options: { onPage?: (seq: number) => void } = {},
): Promise<UntilReport> {
  const positioned = await nearestStates(store, projections, until);
  const starts = new Map<AnyDecider, DeciderStart>();
  for (const decider of deciders) starts.set(decider, (await nearestDeciderStates(store, decider, until)) ?? { seq: 0, states: {} });
  const replayer = new Replayer(deciders, { starts, stopAtFirst: true });
  const from = Math.min(replayer.after, ...positioned.map((p) => p.seq));
  const lastSeq = await feed(store, replayer, {
    from,
    until,
    visit: (event) => foldInto(positioned, event),
    ...(options.onPage ? { onPage: options.onPage } : {}),
  });
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
