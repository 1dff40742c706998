import * as z from 'zod';
import { SAFE_ID, SAFE_ID_RULE } from './idRule.ts';

/** The id rule (./idRule.ts) as a schema, for the event definitions and the edges that parse with zod. */
export const SafeId = z.string().regex(SAFE_ID, `must match ${SAFE_ID_RULE}`);
