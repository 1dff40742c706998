import { adoptionDecider } from './adoption/adoptionDecider.ts';
import { boardDecider } from './board/boardDecider.ts';
import type { AnyDecider } from './decider.ts';
import { counterDecider } from './demo/counterDecider.ts';
import { inboxDecider } from './notifications/inboxDecider.ts';
import { queueDecider } from './queue/queueDecider.ts';
import { runDecider } from './run/runDecider.ts';
import { sessionDecider } from './session/sessionDecider.ts';

/** Every decider `replay` re-runs. */
export const deciders: readonly AnyDecider[] = [counterDecider, queueDecider, runDecider, boardDecider, sessionDecider, adoptionDecider, inboxDecider];
