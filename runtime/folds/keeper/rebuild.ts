import type { AnyProjection } from '../../../projections/projection.ts';
import type { EventStore } from '../../store/eventStore.ts';
import { rebuildAndCheck } from '../snapshot/checkSnapshots.ts';

export interface RebuildReport {
  readonly projection: string;
  /** The seq of the stored checkpoint compared, or null when none was stored. */
  readonly checkpointSeq: number | null;
  readonly equal: boolean;
  readonly detail?: string;
}

/**
 * Refolds every projection from seq 0 and compares each stored checkpoint (and snapshot) with the
 * rebuild as of its own seq: `rebuildAndCheck`, reported per projection. A projection with nothing
 * stored has nothing to disagree with: it is reported equal. `write` then stores the rebuilt states.
 */
export async function rebuildProjections(
  store: EventStore,
  projections: readonly AnyProjection[],
  options: { write?: boolean; onPage?: (seq: number) => void } = {},
): Promise<readonly RebuildReport[]> {
  const result = await rebuildAndCheck(store, projections, {
    write: options.write ?? false,
    checkpointed: new Set(projections),
    ...(options.onPage ? { onPage: options.onPage } : {}),
  });
  return result.projections.map(({ snapshots: _, ...report }) => report);
}
