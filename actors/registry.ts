import type { AnyDecider } from './decider.ts';
import { counterDecider } from './demo/counterDecider.ts';

/** Every decider `replay` re-runs. */
export const deciders: readonly AnyDecider[] = [counterDecider];
