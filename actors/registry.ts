import { boardDecider } from './board/boardDecider.ts';
import type { AnyDecider } from './decider.ts';
import { counterDecider } from './demo/counterDecider.ts';
import { queueDecider } from './queue/queueDecider.ts';
import { runDecider } from './run/runDecider.ts';

/** Every decider `replay` re-runs. */
export const deciders: readonly AnyDecider[] = [counterDecider, queueDecider, runDecider, boardDecider];
