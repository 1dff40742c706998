/**
 * A run in a repository (README "Workspaces in a repository"): its lane's worktree is had first, its
 * HEAD recorded, and the spawn decided from that answer; what the turn changed goes with its completion.
 */
import { describe, expect, it } from 'vitest';
import { decideRun, type RunInput } from '../../actors/run/decideRun.ts';
import { runDecider } from '../../actors/run/runDecider.ts';
import { initialRunExecution } from '../../actors/run/runState.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import { deciderSpec, decisionOf } from '../support/deciderSpec.ts';

const T0 = Date.UTC(2026, 0, 1);
const stream = 'c1/run:r1';
const at = (ms: number) => T0 + ms;
const BASE = 'a'.repeat(40);
const HEAD = 'b'.repeat(40);

const claimed = (workspace: { repo: string | null; base?: string; push?: true }): NewEventOf<'run.claimed'> => ({
  stream: 'c1/lane:L',
  type: 'run.claimed',
  data: { runId: 'r1', lane: 'L', skills: [], start: { budgetS: 60, laneSession: 's1', workspace } },
  at: at(0),
});
const prepared: NewEventOf<'run.workspace.prepared'> = {
  stream,
  type: 'run.workspace.prepared',
  data: { runId: 'r1', repo: 'app', path: '/w/app.worktrees/L', branch: 'runledger/L', head: BASE, made: true, from: 'HEAD' },
  at: at(50),
};
const failed: NewEventOf<'run.workspace.failed'> = {
  stream,
  type: 'run.workspace.failed',
  data: { runId: 'r1', repo: 'app', error: 'the base ref "nope" does not exist in repository app (/r)' },
  at: at(50),
};
const began: NewEventOf<'run.process.began'> = { stream, type: 'run.process.began', data: { runId: 'r1', pid: 42, resuming: 's1' }, at: at(60) };
const changes = {
  repo: 'app',
  base: BASE,
  head: HEAD,
  filesChanged: 2,
  insertions: 5,
  deletions: 1,
  commits: [{ sha: HEAD, subject: 'adds a' }],
  commitCount: 1,
  uncommittedFiles: 1,
  diff: 'diff --git a/a b/a\n',
  diffBytes: 19,
  diffCut: false,
};
const exited = (over: Partial<NewEventOf<'run.process.exited'>['data']> = {}): NewEventOf<'run.process.exited'> => ({
  stream,
  type: 'run.process.exited',
  data: { runId: 'r1', outcome: 'exited', exitCode: 0, signal: null, reply: 'done', tail: '', stderrTail: '', ...over },
  at: at(1000),
});

/** The run started from its queue's claim (a message, decided directly), then its inputs. */
function started(workspace: { repo: string | null; base?: string; push?: true }, ...given: RunInput[]) {
  const decisions = decideRun(initialRunExecution(), claimed(workspace));
  return { decisions, spec: deciderSpec(runDecider, initialRunExecution(), [...decisions, ...given]) };
}

describe('a run in a repository', () => {
  it('given a claim whose start names a repository, then its worktree is asked for first, with the deadline and session it will run with', () => {
    const { decisions } = started({ repo: 'app', base: 'main' });
    expect(decisions.map((d) => d.type)).toEqual(['run.workspace.requested']);
    expect(decisions[0]!.data).toEqual({ runId: 'r1', lane: 'L', repo: 'app', base: 'main', deadlineAt: at(60_000), resume: 's1', budgetS: 60 });
    expect(started({ repo: 'app' }).spec.state.phase).toBe('preparing');
  });

  it('given its worktree ready, then it is run there, with the HEAD the turn starts from', () => {
    const decisions = started({ repo: 'app' }).spec.when(prepared);
    expect(decisionOf(decisions, 'run.execution.requested').data).toEqual({
      runId: 'r1',
      lane: 'L',
      deadlineAt: at(60_000),
      resume: 's1',
      workspace: { repo: 'app', path: '/w/app.worktrees/L', head: BASE },
    });
  });

  it('given its worktree could not be had, then it is completed failed with the reason, never run', () => {
    const decisions = started({ repo: 'app', base: 'nope' }).spec.when(failed);
    expect(decisionOf(decisions, 'run.completion.requested').data.result).toEqual({ ok: false, error: failed.data.error });
  });

  it('given a cancel while its worktree is made, then it completes with the marker, and the late answer is ignored', () => {
    const spec = started({ repo: 'app' }).spec;
    const cancel = spec.when({ stream, type: 'run.cancel.pushed', data: { runId: 'r1', frameId: 'f1' }, at: at(20) });
    expect(decisionOf(cancel, 'run.completion.requested').data.result).toEqual({ ok: false, error: 'cancelled_by_user' });
    expect(spec.when(prepared)).toBeNull();
  });

  it('given an exit with its changes, then its completion carries their summary (not the diff), and a retry too', () => {
    const spec = started({ repo: 'app' }, prepared, began).spec;
    const completion = decisionOf(spec.when(exited({ changes })), 'run.completion.requested');
    const { repo: _repo, diff: _diff, diffBytes: _bytes, diffCut: _cut, ...summary } = changes;
    expect(completion.data).toEqual({ runId: 'r1', attempt: 1, result: { ok: true }, reply: 'done', changes: summary });
    spec.when({ stream, type: 'run.completion.answered', data: { runId: 'r1', status: 503 }, at: at(1100) });
    const again = spec.when({ stream, type: 'run.completion.due', data: { runId: 'r1' }, at: at(3000) });
    expect(decisionOf(again, 'run.completion.requested').data).toMatchObject({ attempt: 2, changes: summary });
  });

  it('given an exit whose changes could not be read (its repository gone), then the turn fails naming it', () => {
    const error = 'what the turn changed could not be read: repository app is no longer at /r (moved or deleted while the daemon runs)';
    const decisions = started({ repo: 'app' }, prepared, began).spec.when(exited({ changesError: error }));
    expect(decisionOf(decisions, 'run.completion.requested').data.result).toEqual({ ok: false, error });
  });

  it('given a refused resume, then the fresh attempt runs in the same worktree, against the same HEAD', () => {
    const spec = started({ repo: 'app' }, prepared, began).spec;
    const decisions = spec.when(exited({ exitCode: 1, reply: null, stderrTail: 'No conversation found with session ID: s1' }));
    expect(decisionOf(decisions, 'run.execution.requested').data.workspace).toEqual({ repo: 'app', path: '/w/app.worktrees/L', head: BASE });
  });

  it('given --push and a turn that committed, then its branch goes to origin before it is completed, with what the exit said', () => {
    const spec = started({ repo: 'app', push: true }, prepared, began).spec;
    const decisions = spec.when(exited({ changes }));
    const push = decisionOf(decisions, 'run.branch.push.requested');
    expect(push.data).toMatchObject({
      repo: 'app',
      path: '/w/app.worktrees/L',
      branch: 'runledger/L',
      completion: { result: { ok: true }, reply: 'done' },
    });
    expect(decisions!.map((d) => d.type)).not.toContain('run.completion.requested');
    const pushed = spec.when({ stream, type: 'run.branch.pushed', data: { runId: 'r1', ok: false, detail: 'rejected' }, at: at(1200) });
    expect(decisionOf(pushed, 'run.completion.requested').data).toMatchObject({ result: { ok: true }, reply: 'done', changes: { commitCount: 1 } });
    // A turn that committed nothing is completed at once.
    const quiet = started({ repo: 'app', push: true }, prepared, began).spec.when(exited({ changes: { ...changes, commits: [], commitCount: 0 } }));
    expect(quiet!.map((d) => d.type)).toEqual(['run.completion.requested']);
  });
});
