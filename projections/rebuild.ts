import { isDeepStrictEqual } from 'node:util';
import type { EventStore } from '../events/store/eventStore.ts';
import { foldLog } from './foldLog.ts';
import { type AnyProjection, checkpointName } from './projection.ts';

export interface RebuildReport {
  readonly projection: string;
  /** The seq of the stored checkpoint compared, or null when none was stored. */
  readonly checkpointSeq: number | null;
  readonly equal: boolean;
  readonly detail?: string;
}

/**
 * Refolds every projection from seq 0 and compares each stored checkpoint with the rebuild as of the
 * checkpoint's own seq. A projection with no checkpoint has nothing to disagree with: it is reported
 * equal. `write` then stores the rebuilt states as the new checkpoints.
 */
export async function rebuildProjections(
  store: EventStore,
  projections: readonly AnyProjection[],
  options: { write?: boolean; onPage?: (seq: number) => void } = {},
): Promise<RebuildReport[]> {
  const states = projections.map((p) => p.initial());
  const stored = await Promise.all(projections.map((p) => store.checkpoints.load(checkpointName(p))));
  const reports: (RebuildReport | undefined)[] = stored.map((c, i) =>
    c ? undefined : { projection: projections[i]!.name, checkpointSeq: null, equal: true },
  );
  const compareAt = (seq: number): void => {
    stored.forEach((checkpoint, i) => {
      if (!checkpoint || reports[i] || checkpoint.seq !== seq) return;
      const rebuilt = JSON.parse(JSON.stringify(states[i]));
      const equal = isDeepStrictEqual(rebuilt, JSON.parse(checkpoint.state));
      reports[i] = {
        projection: projections[i]!.name,
        checkpointSeq: checkpoint.seq,
        equal,
        ...(equal ? {} : { detail: firstDifference(JSON.parse(checkpoint.state), rebuilt) }),
      };
    });
  };
  compareAt(0);
  const head = await foldLog(
    store,
    0,
    (event) => {
      for (let i = 0; i < projections.length; i++) states[i] = projections[i]!.evolve(states[i], event);
      compareAt(event.seq);
    },
    options.onPage ? { onPage: options.onPage } : {},
  );
  stored.forEach((checkpoint, i) => {
    if (reports[i]) return;
    reports[i] = {
      projection: projections[i]!.name,
      checkpointSeq: checkpoint!.seq,
      equal: false,
      detail: `the checkpoint is at seq ${checkpoint!.seq} but the log ends at seq ${head}`,
    };
  });
  if (options.write) {
    for (let i = 0; i < projections.length; i++) {
      await store.checkpoints.save({ name: checkpointName(projections[i]!), seq: head, state: JSON.stringify(states[i]) });
    }
  }
  return reports as RebuildReport[];
}

/** The path of the first value that differs between two JSON values, for a report a person can act on. */
export function firstDifference(expected: unknown, got: unknown, path = 'state'): string {
  if (isDeepStrictEqual(expected, got)) return '';
  if (expected && got && typeof expected === 'object' && typeof got === 'object') {
    const keys = new Set([...Object.keys(expected), ...Object.keys(got)]);
    for (const key of keys) {
      const inner = firstDifference((expected as Record<string, unknown>)[key], (got as Record<string, unknown>)[key], `${path}.${key}`);
      if (inner) return inner;
    }
  }
  return `${path}: stored ${JSON.stringify(expected)?.slice(0, 200)}, rebuilt ${JSON.stringify(got)?.slice(0, 200)}`;
}
