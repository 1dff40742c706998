import type { AnyDecider } from '../../actors/decider.ts';
import { codec } from '../../events/catalog.ts';
import type { AnyEventCodec } from '../../events/codec.ts';
import type { AnyProjection } from '../../projections/projection.ts';
import { deciders } from '../../replay/deciders.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';

/**
 * What `replay` and `rebuild` read a log with, re-decide and refold: production's, unless a test hands
 * them its fixtures' (a log of the test counter) to check the tools on a log of its own.
 */
export interface ToolRegistry {
  readonly codec: AnyEventCodec;
  readonly deciders: readonly AnyDecider[];
  readonly projections: readonly AnyProjection[];
}

export const productionRegistry: ToolRegistry = { codec, deciders, projections };
