import { type AnyProjection, checkpointName, type Projection } from '../../projections/projection.ts';
import type { EventStore } from '../store/eventStore.ts';
import { foldLog } from './foldLog.ts';

export interface Folded<S = unknown> {
  readonly projection: AnyProjection;
  state: S;
  /** The last seq folded into `state`. */
  seq: number;
}

/**
 * Start-up: each projection from its stored checkpoint (when one matches its version), then only the
 * tail of the log past the oldest of those checkpoints, in a single pass shared by all of them.
 */
export async function hydrateProjections(store: EventStore, projections: readonly AnyProjection[], until?: number): Promise<Map<string, Folded>> {
  const folded = new Map<string, Folded>();
  for (const projection of projections) {
    const checkpoint = await store.checkpoints.load(checkpointName(projection));
    const usable = checkpoint && (until === undefined || checkpoint.seq <= until);
    folded.set(projection.name, {
      projection,
      state: usable ? JSON.parse(checkpoint.state) : projection.initial(),
      seq: usable ? checkpoint.seq : 0,
    });
  }
  const entries = [...folded.values()];
  const from = Math.min(...entries.map((f) => f.seq));
  if (entries.length) {
    await foldLog(
      store,
      from,
      (event) => {
        for (const f of entries) {
          if (event.seq <= f.seq) continue;
          f.state = f.projection.evolve(f.state, event);
          f.seq = event.seq;
        }
      },
      until === undefined ? {} : { until },
    );
  }
  return folded;
}

/** The state type of each projection of a list, in its order. */
export type StatesOf<P extends readonly AnyProjection[]> = { -readonly [K in keyof P]: P[K] extends Projection<infer S> ? S : never };

/**
 * The states of `projections`, hydrated in one pass (through `until` when given) and each typed by its own projection:
 * `const [board] = await hydrateStates(store, [boardProjection])`.
 */
export async function hydrateStates<const P extends readonly AnyProjection[]>(
  store: EventStore,
  projections: P,
  until?: number,
): Promise<StatesOf<P>> {
  const folded = await hydrateProjections(store, projections, until);
  // Each state was folded by the projection at the same index, so it is of that projection's type.
  return projections.map((projection) => folded.get(projection.name)!.state) as StatesOf<P>;
}

/** Stores each projection's state as its checkpoint, so the next start folds only what comes after. */
export async function saveCheckpoints(store: EventStore, folded: Iterable<Folded>): Promise<void> {
  for (const f of folded) {
    await store.checkpoints.save({ name: checkpointName(f.projection), seq: f.seq, state: JSON.stringify(f.state) });
  }
}
