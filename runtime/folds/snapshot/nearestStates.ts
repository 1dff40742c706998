import type { DomainEvent } from '../../../events/catalog.ts';
import { type AnyProjection, checkpointName, type Projection } from '../../../projections/projection.ts';
import type { EventStore } from '../../store/eventStore.ts';

/** A projection's state as of `seq`, and where it came from. */
export interface Positioned<S = unknown> {
  readonly projection: Projection<S>;
  state: S;
  /** The last seq folded into `state`. */
  seq: number;
  /** The seq and kind of the snapshot it started from (`initial`: none, seq 0). */
  readonly start: { readonly seq: number; readonly from: 'snapshot' | 'initial' };
}

/**
 * Each projection from its snapshot (history or checkpoint) nearest at or before `until`, of its
 * current version; from its initial state when it has none.
 */
export async function nearestStates<S>(
  store: Pick<EventStore, 'snapshots'>,
  projections: readonly Projection<S>[],
  until: number,
): Promise<Positioned<S>[]> {
  const positioned: Positioned<S>[] = [];
  for (const projection of projections) {
    const snapshot = await store.snapshots.nearest(checkpointName(projection as AnyProjection), until);
    positioned.push(
      snapshot
        ? { projection, state: JSON.parse(snapshot.state) as S, seq: snapshot.seq, start: { seq: snapshot.seq, from: 'snapshot' } }
        : { projection, state: projection.initial(), seq: 0, start: { seq: 0, from: 'initial' } },
    );
  }
  return positioned;
}

/** Folds `event` into every positioned projection that has not seen it. */
export function foldInto(positioned: readonly Positioned[], event: DomainEvent): void {
  for (const p of positioned) {
    if (event.seq <= p.seq) continue;
    p.state = p.projection.evolve(p.state, event);
    p.seq = event.seq;
  }
}
