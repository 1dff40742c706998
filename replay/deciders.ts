import { adoptionDecider } from '../actors/board/adoption/adoptionDecider.ts';
import { boardDecider } from '../actors/board/boardDecider.ts';
import { inboxDecider } from '../actors/board/inbox/inboxDecider.ts';
import type { AnyDecider } from '../actors/decider.ts';
import { queueDecider } from '../actors/lane/queueDecider.ts';
import { runDecider } from '../actors/run/runDecider.ts';
import { sessionDecider } from '../actors/session/sessionDecider.ts';

/** Every decider `replay` re-runs. */
export const deciders: readonly AnyDecider[] = [queueDecider, runDecider, boardDecider, sessionDecider, adoptionDecider, inboxDecider];
