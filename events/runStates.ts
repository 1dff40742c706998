/**
 * The states of a run on the board, as the wire names them (`GET /v1/runs/{run_id}`'s `state`): no
 * schema here, so the CLI's option definitions can offer them without loading one (start time).
 */

/** Not yet terminal: waiting for a computer, claimed by one, or running there. */
export const LIVE_STATES = ['queued', 'claimed', 'running'] as const;
/** Terminal: it finished (succeeded or failed), was cancelled, or was resolved when its lease lapsed. */
export const FINISHED_STATES = ['succeeded', 'failed', 'cancelled', 'resolved'] as const;
export const RUN_STATES = [...LIVE_STATES, ...FINISHED_STATES] as const;
