import * as z from 'zod';
import { ChangeSummary } from '../workspace.ts';

/**
 * `changes` as the wire carries it (README "HTTP API"): what a turn in a worktree changed, sent on
 * `complete` and answered on `GET /v1/runs/{run_id}`: `{base, head, files_changed, insertions,
 * deletions, commits: [{sha, subject}], commit_count, uncommitted_files}`.
 */
export const ChangesBody = z.strictObject({
  base: ChangeSummary.shape.base,
  head: ChangeSummary.shape.head,
  files_changed: ChangeSummary.shape.filesChanged,
  insertions: ChangeSummary.shape.insertions,
  deletions: ChangeSummary.shape.deletions,
  commits: ChangeSummary.shape.commits,
  commit_count: ChangeSummary.shape.commitCount,
  uncommitted_files: ChangeSummary.shape.uncommittedFiles,
});
export type ChangesBody = z.infer<typeof ChangesBody>;

export function changesToWire(changes: ChangeSummary): ChangesBody {
  const { base, head, filesChanged, insertions, deletions, commits, commitCount, uncommittedFiles } = changes;
  return {
    base,
    head,
    files_changed: filesChanged,
    insertions,
    deletions,
    commits,
    commit_count: commitCount,
    uncommitted_files: uncommittedFiles,
  };
}

export function changesFromWire(body: ChangesBody): ChangeSummary {
  return {
    base: body.base,
    head: body.head,
    filesChanged: body.files_changed,
    insertions: body.insertions,
    deletions: body.deletions,
    commits: body.commits,
    commitCount: body.commit_count,
    uncommittedFiles: body.uncommitted_files,
  };
}
