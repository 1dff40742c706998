/**
 * A claimed run whose agent stopped at its login's usage limit (docs/rules.md#computer-behaviour, "Execution"): not a
 * failure of the turn. It keeps its claim and its session, waits (heartbeated) for its queue to give it
 * a slot again, then runs the same turn again with what its budget had left (the budget counts time
 * spent executing only). A cancel while it waits completes it with the marker.
 */
import { describe, expect, it } from 'vitest';
import { decideRun, type RunDecision, type RunInput } from '../../actors/run/decideRun.ts';
import { runDecider } from '../../actors/run/runDecider.ts';
import { CANCELLED_MARKER, initialRunExecution } from '../../actors/run/runState.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import { deciderSpec, decisionOf } from '../support/deciderSpec.ts';

const T0 = Date.UTC(2026, 0, 1);
const stream = 'c1/run:r1';
const at = (ms: number) => T0 + ms;
const WORDS = "You've hit your limit · resets 2pm (Europe/Berlin)";

const handed = (budgetS = 3600, local = false): NewEventOf<'run.handed.over'> => ({
  stream,
  type: 'run.handed.over',
  data: { runId: 'r1', lane: 'L', budgetS, laneSession: 'old', ...(local ? { local: true as const } : {}) },
  at: at(0),
});
const began: NewEventOf<'run.process.began'> = { stream, type: 'run.process.began', data: { runId: 'r1', pid: 4242, resuming: 'old' }, at: at(10) };
const announced: NewEventOf<'run.session.announced'> = { stream, type: 'run.session.announced', data: { runId: 'r1', sessionId: 'new' }, at: at(20) };
const exited = (usageLimit?: { words: string; resetAt?: number }, outcome: 'exited' | 'cancelled' = 'exited'): NewEventOf<'run.process.exited'> => ({
  stream,
  type: 'run.process.exited',
  data: {
    runId: 'r1',
    outcome,
    exitCode: 1,
    signal: null,
    reply: null,
    tail: '',
    stderrTail: '',
    agentError: `success: ${WORDS}`,
    ...(usageLimit ? { usageLimit } : {}),
  },
  at: at(60_000),
});
const over = (ms: number): NewEventOf<'run.limit.over'> => ({ stream, type: 'run.limit.over', data: { runId: 'r1' }, at: at(ms) });
const pushed = (ms: number): NewEventOf<'run.cancel.pushed'> => ({
  stream,
  type: 'run.cancel.pushed',
  data: { runId: 'r1', frameId: 'x' },
  at: at(ms),
});
const heartbeat = (status: number, ms: number): NewEventOf<'run.heartbeat.answered'> => ({
  stream,
  type: 'run.heartbeat.answered',
  data: { runId: 'r1', status, cancelRequested: false },
  at: at(ms),
});

const spec = (...given: RunInput[]) => deciderSpec(runDecider, initialRunExecution(), given);
const types = (decisions: readonly RunDecision[] | null) => (decisions === null ? ['(ignored)'] : decisions.map((d) => d.type));
const limit = { words: WORDS, resetAt: at(3_600_000) };

describe('a run whose agent stopped at its usage limit', () => {
  it('given the exit says so, then it is not completed: it waits, keeping its session, with its budget’s rest', () => {
    const s = spec(handed(), began, announced);
    const decisions = s.when(exited(limit));
    expect(types(decisions)).toEqual(['run.limit.reached']);
    expect(decisionOf(decisions, 'run.limit.reached').data).toMatchObject({ words: WORDS, resetAt: at(3_600_000), budgetLeftMs: 3_540_000 });
    expect(s.state).toMatchObject({ phase: 'limited', announced: 'new', session: 'old', pid: null });
  });

  it('given its queue gave it a slot again, then the same turn runs again, resuming the announced session, inside its budget’s rest', () => {
    const s = spec(handed(), began, announced, exited(limit));
    const decisions = s.when(over(4_000_000));
    expect(decisionOf(decisions, 'run.execution.requested').data).toEqual({
      runId: 'r1',
      lane: 'L',
      deadlineAt: at(4_000_000 + 3_540_000),
      resume: 'new',
    });
    // Once: a second wake-up is not even recorded.
    expect(s.when(over(4_000_001))).toBeNull();
  });

  it('given no budget, then it runs again with none', () => {
    const s = spec(handed(0), began, exited({ words: WORDS }));
    expect(decisionOf(s.when(over(1_000_000)), 'run.execution.requested').data.deadlineAt).toBeNull();
  });

  it('given a cancel while it waits, then it never runs again and is completed with the marker', () => {
    const s = spec(handed(), began, exited(limit));
    const decisions = s.when(pushed(100_000));
    expect(types(decisions)).toEqual(['run.cancel.decided', 'run.completion.requested']);
    expect(decisionOf(decisions, 'run.completion.requested').data.result).toEqual({ ok: false, error: CANCELLED_MARKER });
    expect(s.when(over(4_000_000))).toBeNull();
  });

  it('given the board resolved it while it waits, then it settles, nothing posted', () => {
    const s = spec(handed(), began, exited(limit));
    expect(types(s.when(heartbeat(410, 100_000)))).toEqual(['run.resolved.elsewhere', 'run.settled']);
  });

  it('given a cancel while it ran, then the limit does not matter: cancelled', () => {
    const s = spec(handed(), began, pushed(30_000));
    expect(decisionOf(s.when(exited(limit, 'cancelled')), 'run.completion.requested').data.result.error).toBe(CANCELLED_MARKER);
  });

  it('given a local turn (no queue to wait in), then it fails with the agent’s words', () => {
    const s = spec(handed(3600, true), began);
    const settled = decisionOf(s.when(exited(limit)), 'run.settled').data;
    expect(settled.result?.ok).toBe(false);
    expect(settled.result?.error).toContain(WORDS);
  });
});

/** A claim its queue granted while the run's login was at its usage limit: held, never started before the reset. */
const heldClaim = (workspace?: { repo: string }): NewEventOf<'run.claimed'> => ({
  stream: 'c1/lane:L',
  type: 'run.claimed',
  data: {
    runId: 'r1',
    lane: 'L',
    skills: [],
    start: { budgetS: 600, laneSession: 'old', ...(workspace ? { workspace } : {}) },
    heldUntil: at(120_000),
  },
  at: at(0),
});
/** The run as its queue's held claim (a message, decided directly) left it, then its inputs. */
function held(workspace?: { repo: string }, ...given: RunInput[]) {
  const decisions = decideRun(initialRunExecution(), heldClaim(workspace));
  return { decisions, spec: deciderSpec(runDecider, initialRunExecution(), [...decisions, ...given]) };
}

describe('a run claimed while its login is at its usage limit', () => {
  it('given its queue holds it, then it is not started: it waits (heartbeated, as limited) for a slot', () => {
    const { decisions, spec: s } = held();
    expect(types(decisions)).toEqual(['run.start.held']);
    expect(decisionOf(decisions, 'run.start.held').data).toMatchObject({
      runId: 'r1',
      lane: 'L',
      start: { budgetS: 600, laneSession: 'old' },
      until: at(120_000),
    });
    expect(s.state).toMatchObject({ phase: 'limited', lane: 'L', pid: null });
  });

  it('given its queue gave it a slot at the reset, then it starts then, with its whole budget, resuming the lane’s session', () => {
    const decisions = held().spec.when(over(120_000));
    expect(types(decisions)).toEqual(['run.execution.requested']);
    expect(decisionOf(decisions, 'run.execution.requested').data).toEqual({
      runId: 'r1',
      lane: 'L',
      deadlineAt: at(120_000 + 600_000),
      resume: 'old',
      budgetS: 600,
    });
  });

  it('given a repository, then at the reset its worktree is asked for first, as a claimed run starts', () => {
    const decisions = held({ repo: 'app' }).spec.when(over(120_000));
    expect(decisionOf(decisions, 'run.workspace.requested').data).toMatchObject({
      repo: 'app',
      deadlineAt: at(720_000),
      resume: 'old',
      budgetS: 600,
    });
  });

  it('given a cancel while it is held, then it never starts and is completed with the marker', () => {
    const { spec: s } = held();
    const decisions = s.when(pushed(60_000));
    expect(types(decisions)).toEqual(['run.cancel.decided', 'run.completion.requested']);
    expect(decisionOf(decisions, 'run.completion.requested').data.result).toEqual({ ok: false, error: CANCELLED_MARKER });
    expect(s.when(over(120_000))).toBeNull();
  });
});
