import { adoptionsProjection } from '../../../projections/adoptions.ts';
import { auditSummaryProjection } from '../../../projections/audit/summary.ts';
import { boardProjection } from '../../../projections/board.ts';
import { closeProjection } from '../../../projections/close.ts';
import { cursorsProjection } from '../../../projections/cursors.ts';
import { executionsProjection } from '../../../projections/executions.ts';
import { laneSessionsProjection } from '../../../projections/laneSessions.ts';
import { noticesProjection } from '../../../projections/notices.ts';
import type { AnyProjection } from '../../../projections/projection.ts';
import { queueProjection } from '../../../projections/queue.ts';
import { usageProjection } from '../../../projections/usage.ts';

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
