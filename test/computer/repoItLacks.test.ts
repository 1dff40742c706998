/**
 * A computer that gets a run for a repository it has not (an older board that offers any computer any
 * run, a restart that dropped the repository while the run waited there) fails it naming the
 * repository and what it has, and touches nothing (docs/rules.md#workspaces).
 */
import { describe, expect, it } from 'vitest';
import { agentKindOf } from '../../actors/run/resume.ts';
import { checkRepositories } from '../../adapters/git/repositories.ts';
import { workspaceConsumer } from '../../apps/computer/runEffects.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import { openTempStore, tempDir } from '../support/tempStore.ts';
import { git, makeRepo } from '../workspace/support.ts';

describe('a run for a repository its computer has not', () => {
  it('is failed naming the repository and the ones the computer has, and no branch is made', async () => {
    const dir = tempDir();
    const app = makeRepo(dir, 'app');
    const inputs: Record<string, unknown>[] = [];
    const workspaces = workspaceConsumer({
      computer: 'c1',
      store: await openTempStore(),
      clock: systemClock,
      exec: 'true',
      kind: agentKindOf('true'),
      workspaceRoot: tempDir(),
      repos: await checkRepositories([{ name: 'app', path: app }]),
      killGraceMs: 100,
      budgetNote: true,
      handles: new Map(),
      input: async (_runId, event) => void inputs.push({ type: event.type, ...event.data }),
      runToken: async () => null,
      phaseOf: () => 'preparing',
      promptOf: () => 'hi',
      log: () => undefined,
      board: { reply: async () => ({ status: 0 }), complete: async () => ({ status: 0 }) },
    });
    const at = Date.now();
    const requested = {
      seq: 1,
      version: 1,
      stream: 'c1/run:r1',
      type: 'run.workspace.requested',
      at,
      cause: null,
      actor: 'h:1',
      data: { runId: 'r1', lane: 'L', repo: 'lib', deadlineAt: at + 60_000, resume: null, budgetS: 60 },
    } satisfies DomainEvent;
    await workspaces.perform(requested, requested);
    expect(inputs).toEqual([
      {
        type: 'run.workspace.failed',
        runId: 'r1',
        repo: 'lib',
        error: 'computer c1 has no repository named lib (it has app): start its daemon with --repo lib=PATH, or submit with another --repo',
      },
    ]);
    expect(git(app, 'branch', '--list', 'runledger/*')).toBe('');
  });
});
