import { FINISHED_STATES } from '../../events/runStates.ts';
import { type ChangesBody, changesToWire } from '../../events/wire/changes.ts';
import type { RunRecord } from '../../projections/audit/runRecord.ts';

/**
 * `GET /v1/runs/{run_id}/diff`: the diff a run's turn left in its lane's worktree, as its computer
 * recorded it with the turn's exit (docs/agents.md#workspaces-in-a-repository). The board has it when it
 * holds the computer's events: its own when it is the computer too, else the copy a computer reports.
 */
export interface RunDiffBody {
  run_id: string;
  /** null: the turn ran in a plain folder, not in a worktree of a repository. */
  changes: ChangesBody | null;
  /** The repository's name on its computer (`daemon --repo NAME=PATH`). */
  repo?: string;
  diff?: string;
  /** The diff's whole size; the log keeps its first MiB (`diff_cut`). */
  diff_bytes?: number;
  diff_cut?: boolean;
}

export type RunDiffAnswer =
  | { readonly status: 200; readonly body: RunDiffBody }
  | { readonly status: 404 | 409; readonly code: 'unknown_run' | 'run_not_finished' | 'diff_not_reported'; readonly reason: string };

/** What the board can say of a run's diff from the run's record (its events, the computer's included). */
export function runDiffOf(record: RunRecord): RunDiffAnswer {
  const runId = record.runId;
  if (record.state === null) return { status: 404, code: 'unknown_run', reason: `no run ${runId}` };
  if (record.diff !== null && record.changes !== null) {
    const { text, bytes, cut, repo } = record.diff;
    return { status: 200, body: { run_id: runId, changes: changesToWire(record.changes), repo, diff: text, diff_bytes: bytes, diff_cut: cut } };
  }
  const finished = (FINISHED_STATES as readonly string[]).includes(record.state);
  if (!finished)
    return { status: 409, code: 'run_not_finished', reason: `run ${runId} is ${record.state}: what its turn changed is recorded when it ends` };
  if (record.changes === null && record.processExitedAt !== null) return { status: 200, body: { run_id: runId, changes: null } };
  const computer = record.computer ?? 'its computer';
  return {
    status: 404,
    code: 'diff_not_reported',
    reason:
      record.changes === null
        ? `run ${runId} ended ${record.state} with no exit of its agent on this board: its agent never ran${record.error ? ` (${record.error})` : ''}, or ${computer} has not reported its events here; on ${computer}, \`runledger show ${runId.slice(0, 8)} --diff --db LOG\` reads its own log`
        : `this board has the summary of what run ${runId} changed but not its diff: ${computer} has not reported it (yet); on ${computer}, \`runledger show ${runId.slice(0, 8)} --diff --db LOG\` reads its own log`,
  };
}
