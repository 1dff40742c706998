import { adoptionsProjection } from '../adoptions.ts';
import { auditSummaryProjection } from '../audit/summary.ts';
import { boardProjection } from '../board.ts';
import { closeProjection } from '../close.ts';
import { cursorsProjection } from '../cursors.ts';
import { executionsProjection } from '../executions.ts';
import { laneSessionsProjection } from '../laneSessions.ts';
import { noticesProjection } from '../notices.ts';
import type { AnyProjection } from '../projection.ts';
import { queueProjection } from '../queue.ts';
import { usageProjection } from '../usage.ts';

/** Every projection `rebuild`, `replay --until` and start-up know of. */
export const projections: readonly AnyProjection[] = [
  cursorsProjection,
  queueProjection,
  executionsProjection,
  laneSessionsProjection,
  boardProjection,
  auditSummaryProjection,
  closeProjection,
  noticesProjection,
  adoptionsProjection,
  usageProjection,
] as readonly AnyProjection[];
