import type { AnyDecider } from '../actors/decider.ts';
import type { AnyEventCodec } from '../events/codec.ts';
import type { EventStore } from '../runtime/store/eventStore.ts';
import type { LogQueries } from '../runtime/store/logQueries.ts';
import type { Stretch } from '../runtime/store/sqlite/startingCheckpoints.ts';
import { CheckpointMismatchError, startsFromCheckpoint } from './checkpointStarts.ts';
import { complete, feed } from './feed.ts';
import { type ReplayDifference, Replayer } from './replayer.ts';

export type { DecisionView } from './compare.ts';
export type { ReplayDifference } from './replayer.ts';

/** Where a replay started other than at seq 1: the starting checkpoint at `seq`, kept in `where`. */
export interface ReplayStart {
  readonly seq: number;
  readonly where: string;
}

export type ReplayReport =
  | {
      readonly ok: true;
      readonly inputs: number;
      readonly decisions: number;
      readonly lastSeq: number;
      /** Present when the history before it is not there (archives deleted, or one segment replayed alone). */
      readonly startedFrom?: ReplayStart;
      /** Each gap in the history (a deleted archive) and the starting checkpoint the replay went on from. */
      readonly resumedFrom?: readonly (ReplayStart & { readonly missing: { readonly from: number; readonly to: number } })[];
    }
  | ({ readonly ok: false } & ReplayDifference);

export interface ReplayLogOptions {
  readonly until?: number;
  readonly onPage?: (seq: number) => void;
  /** The catalog the rows are read with: production's unless a test's log holds its fixtures' events. */
  readonly codec?: AnyEventCodec;
  /**
   * The history as stretches without a gap, each from its starting checkpoint (a log cut by retention,
   * docs/retention.md#replay-and-audit-of-an-archive); none: the whole log from seq 1.
   */
  readonly stretches?: readonly Stretch[];
}

const FROM_START: readonly Stretch[] = [{ from: 1, to: Number.POSITIVE_INFINITY, where: 'the log', checkpoint: null }];

/**
 * Verifies the whole log (or up to `until`): every input re-decided, against the state folded from the
 * recorded events before it, stopping at the first difference; from seq 0, or where the history kept
 * starts, from the starting checkpoint there. It only reads: the deciders' snapshots are stored by
 * `rebuild --write`.
 */
export async function replayLog(
  store: Pick<EventStore, 'readAll'> & Partial<Pick<LogQueries, 'scanRows'>>,
  deciders: readonly AnyDecider[],
  options: ReplayLogOptions = {},
): Promise<ReplayReport> {
  const until = options.until ?? Number.POSITIVE_INFINITY;
  const stretches = (options.stretches ?? FROM_START).filter((s) => s.from <= until);
  let inputs = 0;
  let decisions = 0;
  let lastSeq = 0;
  const resumedFrom: (ReplayStart & { missing: { from: number; to: number } })[] = [];
  for (const [i, stretch] of stretches.entries()) {
    const starts = stretch.from === 1 ? undefined : startsOf(stretch, deciders);
    const replayer: Replayer = new Replayer(deciders, {
      stopAtFirst: true,
      ...(starts ? { starts } : {}),
      ...(options.codec ? { codec: options.codec } : {}),
    });
    const through = Math.min(until, stretch.to);
    const last = await feed(store, replayer, {
      ...(Number.isFinite(through) ? { until: through } : {}),
      ...(options.onPage ? { onPage: options.onPage } : {}),
    });
    const difference = replayer.firstDifference;
    if (difference) return { ok: false, ...difference, input: await complete(store, difference.input) };
    inputs += replayer.inputs;
    decisions += replayer.decisions;
    lastSeq = Math.max(lastSeq, last);
    const before = stretches[i - 1];
    if (before) resumedFrom.push({ seq: stretch.from - 1, where: stretch.where, missing: { from: before.to + 1, to: stretch.from - 1 } });
  }
  const first = stretches[0];
  return {
    ok: true,
    inputs,
    decisions,
    lastSeq,
    ...(first && first.from > 1 ? { startedFrom: { seq: first.from - 1, where: first.where } } : {}),
    ...(resumedFrom.length ? { resumedFrom } : {}),
  };
}

function startsOf(stretch: Stretch, deciders: readonly AnyDecider[]): ReturnType<typeof startsFromCheckpoint> {
  if (stretch.checkpoint === null) {
    throw new CheckpointMismatchError(
      `${stretch.where} starts at seq ${stretch.from} and holds no starting checkpoint (the states at seq ${stretch.from - 1}): ` +
        'it was cut by a runledger that kept none. Replay the log with the archives before it beside it, from seq 1 (docs/retention.md#starting-checkpoints)',
    );
  }
  return startsFromCheckpoint(stretch.checkpoint, deciders, stretch.where, stretch.from - 1);
}
