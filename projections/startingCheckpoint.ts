import type { DomainEvent } from '../events/catalog.ts';
import type { AnyProjection } from './projection.ts';

/**
 * One fold's state in a starting checkpoint (docs/retention.md#starting-checkpoints): a projection's,
 * or a decider's states as replay folds them, with the version of the fold that made it.
 */
export interface CheckpointEntry {
  readonly name: string;
  readonly version: number;
  /** The state as JSON text. */
  readonly state: string;
}

/**
 * The states of every fold at a cut, folded from those at the previous cut (`prior`; null: the log's
 * start, every fold from its initial state) over the events in between. A pure fold: the store's shell
 * hands it the events and keeps what it gives.
 *
 * A fold `prior` holds no state of (one added since, or whose version moved on) cannot be carried on:
 * it is named in `missing` and left out, never started from a state of another shape.
 */
export class CheckpointFolder {
  readonly missing: string[] = [];
  private readonly folding: { readonly projection: AnyProjection; state: unknown }[] = [];

  constructor(folds: readonly AnyProjection[], prior: readonly CheckpointEntry[] | null) {
    for (const projection of folds) {
      if (prior === null) {
        this.folding.push({ projection, state: projection.initial() });
        continue;
      }
      const entry = prior.find((e) => e.name === projection.name && e.version === projection.version);
      if (entry) this.folding.push({ projection, state: JSON.parse(entry.state) as unknown });
      else this.missing.push(`${projection.name}@${projection.version}`);
    }
  }

  visit(event: DomainEvent): void {
    for (const f of this.folding) f.state = f.projection.evolve(f.state, event);
  }

  /** The states folded so far, each with its fold's name and version. */
  entries(): CheckpointEntry[] {
    return this.folding.map(({ projection, state }) => ({ name: projection.name, version: projection.version, state: JSON.stringify(state) }));
  }
}

/** Why a starting checkpoint cannot start a fold: it holds none of it, or one of another version. */
export function checkpointMismatch(entries: readonly CheckpointEntry[], projection: AnyProjection): string | null {
  const found = entries.filter((e) => e.name === projection.name);
  if (found.some((e) => e.version === projection.version)) return null;
  if (found.length === 0) return `it holds no state of ${projection.name} (a fold this runledger has and the one that wrote it had not)`;
  return (
    `it holds ${projection.name} version ${found.map((e) => e.version).join(', ')}, and this runledger folds version ${projection.version} ` +
    '(the state changed shape since)'
  );
}
