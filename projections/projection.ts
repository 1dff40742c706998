import type { DomainEvent } from '../events/catalog.ts';

/**
 * A read model as a pure fold over the log. `evolve` owns the state it is given: it may update it in
 * place and return it (a queue of 100,000 runs is not copied per event), so nothing else may keep a
 * reference to a state that is still being folded. States are plain JSON data, so they can be
 * checkpointed and compared.
 */
export interface Projection<S> {
  readonly name: string;
  /** Bump when the fold changes meaning: older checkpoints are then ignored and rebuilt. */
  readonly version: number;
  initial(): S;
  evolve(state: S, event: DomainEvent): S;
}

export type AnyProjection = Projection<unknown>;

export function checkpointName(projection: AnyProjection): string {
  return `${projection.name}@${projection.version}`;
}
