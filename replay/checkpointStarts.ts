import type { AnyDecider } from '../actors/decider.ts';
import type { AnyProjection } from '../projections/projection.ts';
import { type CheckpointEntry, CheckpointFolder, checkpointMismatch } from '../projections/startingCheckpoint.ts';
import type { CheckpointFold } from '../runtime/store/sqlite/startingCheckpoints.ts';
import { deciderStatesOf, snapshotProjectionOf, storedDeciderProjections } from './deciderStates.ts';
import type { DeciderStart } from './replayer.ts';

/**
 * The folds a starting checkpoint keeps (docs/retention.md#starting-checkpoints): every projection, and
 * the states of every decider that are not one of them, as `rebuild --write` snapshots them.
 */
export function checkpointFold(registry: {
  readonly deciders: readonly AnyDecider[];
  readonly projections: readonly AnyProjection[];
}): CheckpointFold {
  const folds = [...registry.projections, ...storedDeciderProjections(registry.deciders)];
  return (prior) => new CheckpointFolder(folds, prior);
}

/** A starting checkpoint that cannot start a replay: names where it is, which fold, and what to do. */
export class CheckpointMismatchError extends Error {
  override readonly name = 'CheckpointMismatchError';
}

/**
 * Every decider's start from a starting checkpoint (the states at `seq`, kept in `where`). A decider
 * whose fold the checkpoint holds in no version this runledger folds is refused, naming it: started
 * from a state of another shape, its replay would report differences that are not there.
 */
export function startsFromCheckpoint(
  entries: readonly CheckpointEntry[],
  deciders: readonly AnyDecider[],
  where: string,
  seq: number,
): Map<AnyDecider, DeciderStart> {
  const starts = new Map<AnyDecider, DeciderStart>();
  for (const decider of deciders) {
    const fold = snapshotProjectionOf(decider);
    const why = checkpointMismatch(entries, fold);
    if (why !== null) {
      throw new CheckpointMismatchError(
        `the starting checkpoint of ${where} (the states at seq ${seq}) cannot start the replay of the ${decider.name} decider: ${why}. ` +
          'Replay it with the runledger that wrote it, or replay the log with its earlier archives beside it (docs/retention.md#starting-checkpoints)',
      );
    }
    const entry = entries.find((e) => e.name === fold.name && e.version === fold.version)!;
    starts.set(decider, { seq, states: deciderStatesOf(decider, JSON.parse(entry.state)) });
  }
  return starts;
}
