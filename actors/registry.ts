import type { AnyDecider } from './decider.ts';
import { counterDecider } from './demo/counterDecider.ts';
import { queueDecider } from './queue/queueDecider.ts';

/** Every decider `replay` re-runs. */
export const deciders: readonly AnyDecider[] = [counterDecider, queueDecider];
