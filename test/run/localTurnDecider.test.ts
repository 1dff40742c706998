import { describe, expect, it } from 'vitest';
import type { RunDecision, RunInput } from '../../actors/run/decideRun.ts';
import { runDecider } from '../../actors/run/runDecider.ts';
import { INTERRUPTED_BY_RESTART, initialRunExecution } from '../../actors/run/runState.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import { deciderSpec } from '../support/deciderSpec.ts';

const T0 = Date.UTC(2026, 0, 1);
const stream = 'local/run:turn-1';
const at = (ms: number) => T0 + ms;
const runId = 'turn-1';

const input = {
  handed: (laneSession: string | null = null, budgetS = 60): NewEventOf<'run.handed.over'> => ({
    stream,
    type: 'run.handed.over',
    data: { runId, lane: 'L', budgetS, laneSession, local: true },
    at: at(0),
  }),
  began: (resuming: string | null = null, ms = 10): NewEventOf<'run.process.began'> => ({
    stream,
    type: 'run.process.began',
    data: { runId, pid: 4242, resuming },
    at: at(ms),
  }),
  announced: (sessionId: string): NewEventOf<'run.session.announced'> => ({
    stream,
    type: 'run.session.announced',
    data: { runId, sessionId },
    at: at(20),
  }),
  exited: (
    over: Partial<{
      outcome: 'exited' | 'timed_out' | 'killed';
      exitCode: number | null;
      reply: string | null;
      tail: string;
      stderrTail: string;
    }> = {},
    ms = 1000,
  ): NewEventOf<'run.process.exited'> => ({
    stream,
    type: 'run.process.exited',
    data: {
      runId,
      outcome: over.outcome ?? 'exited',
      exitCode: over.exitCode === undefined ? 0 : over.exitCode,
      signal: null,
      reply: over.reply === undefined ? 'done' : over.reply,
      tail: over.tail ?? '',
      stderrTail: over.stderrTail ?? '',
    },
    at: at(ms),
  }),
  interrupted: (alive: boolean): NewEventOf<'run.found.interrupted'> => ({
    stream,
    type: 'run.found.interrupted',
    data: { runId, pid: 4242, alive },
    at: at(5000),
  }),
};

const spec = (...given: RunInput[]) => deciderSpec(runDecider, initialRunExecution(), given);
const types = (decisions: readonly RunDecision[] | null) => (decisions === null ? ['(ignored)'] : decisions.map((d) => d.type));

describe('a local turn (runledger run): no board holds it', () => {
  it('given a clean exit, then it settles at once with its result, and no completion is asked for', () => {
    const decisions = spec(input.handed(), input.began()).when(input.exited());
    expect(decisions).toEqual([
      {
        stream,
        type: 'run.settled',
        data: { runId, reported: false, reason: { code: 'local', ok: true }, result: { ok: true } },
        at: at(1000),
      },
    ]);
  });

  it('given a timeout, then the session it announced is kept and the result carries the unfinished answer', () => {
    const decisions = spec(input.handed(null, 30), input.began(), input.announced('s1')).when(
      input.exited({ outcome: 'timed_out', exitCode: null, reply: null, tail: 'half' }),
    );
    expect(types(decisions)).toEqual(['run.settled']);
    expect(decisions?.[0]?.data).toMatchObject({
      result: { ok: false, error: 'timed out after about 30 seconds, its budget — unfinished answer: …half' },
    });
  });

  it('given a refused resume, then the session is forgotten and the turn runs fresh inside the same deadline, as on the daemon', () => {
    const s = spec(input.handed('gone'), input.began('gone'));
    const decisions = s.when(input.exited({ exitCode: 1, reply: null, stderrTail: 'No conversation found with session ID: gone' }, 200));
    expect(types(decisions)).toEqual(['lane.session.forgotten', 'run.execution.requested']);
    expect(decisions?.[1]?.data).toEqual({ runId, lane: 'L', deadlineAt: at(60_000), resume: null });
  });

  it('given an ordinary failure after it announced a session, then that session is forgotten and it settles failed', () => {
    const decisions = spec(input.handed('old'), input.began('old'), input.announced('new')).when(
      input.exited({ exitCode: 2, reply: null, stderrTail: 'boom' }),
    );
    expect(types(decisions)).toEqual(['lane.session.forgotten', 'run.settled']);
    expect(decisions?.[1]?.data).toMatchObject({ reported: false, result: { ok: false, error: 'the agent exited with code 2: boom' } });
  });

  it('given a daemon that finds it interrupted (its runledger run died), then its group is killed if alive and it settles, reporting to nobody', () => {
    expect(types(spec(input.handed(), input.began()).when(input.interrupted(true)))).toEqual(['run.kill.requested', 'run.settled']);
    const decisions = spec(input.handed(), input.began()).when(input.interrupted(false));
    expect(decisions?.map((d) => d.data)).toEqual([
      {
        runId,
        reported: false,
        reason: { code: 'local', ok: false, error: INTERRUPTED_BY_RESTART },
        result: { ok: false, error: INTERRUPTED_BY_RESTART },
      },
    ]);
  });
});
