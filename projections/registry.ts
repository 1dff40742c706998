import { boardProjection } from './board.ts';
import { countersProjection } from './counters.ts';
import { cursorsProjection } from './cursors.ts';
import type { AnyProjection } from './projection.ts';
import { queueProjection } from './queue.ts';

/** Every projection `rebuild`, `replay --until` and start-up know of. */
export const projections: readonly AnyProjection[] = [cursorsProjection, queueProjection, countersProjection, boardProjection] as readonly AnyProjection[];
