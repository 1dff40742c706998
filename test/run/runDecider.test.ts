import { describe, expect, it } from 'vitest';
import type { RunDecision, RunInput } from '../../actors/run/decideRun.ts';
import { runDecider } from '../../actors/run/runDecider.ts';
import { initialRunExecution } from '../../actors/run/runState.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import { deciderSpec, decisionOf, decisionsOf } from '../support/deciderSpec.ts';

const T0 = Date.UTC(2026, 0, 1);
const stream = 'c1/run:r1';
const at = (ms: number) => T0 + ms;

const input = {
  handed: (laneSession: string | null = null, budgetS = 7200, ms = 0): NewEventOf<'run.handed.over'> => ({
    stream,
    type: 'run.handed.over',
    data: { runId: 'r1', lane: 'L', budgetS, laneSession },
    at: at(ms),
  }),
  began: (pid = 4242, resuming: string | null = null, ms = 10): NewEventOf<'run.process.began'> => ({
    stream,
    type: 'run.process.began',
    data: { runId: 'r1', pid, resuming },
    at: at(ms),
  }),
  announced: (sessionId: string, ms = 20): NewEventOf<'run.session.announced'> => ({
    stream,
    type: 'run.session.announced',
    data: { runId: 'r1', sessionId },
    at: at(ms),
  }),
  exited: (
    over: Partial<{
      outcome: 'exited' | 'timed_out' | 'cancelled' | 'killed';
      exitCode: number | null;
      reply: string | null;
      tail: string;
      stderrTail: string;
      agentError: string;
      usage: { costUsd?: number; inputTokens?: number };
    }> = {},
    ms = 1000,
  ): NewEventOf<'run.process.exited'> => ({
    stream,
    type: 'run.process.exited',
    data: {
      runId: 'r1',
      outcome: over.outcome ?? 'exited',
      exitCode: over.exitCode === undefined ? 0 : over.exitCode,
      signal: null,
      reply: over.reply === undefined ? 'done' : over.reply,
      tail: over.tail ?? '',
      stderrTail: over.stderrTail ?? '',
      ...(over.agentError === undefined ? {} : { agentError: over.agentError }),
      ...(over.usage === undefined ? {} : { usage: over.usage }),
    },
    at: at(ms),
  }),
  heartbeat: (status: number, cancelRequested: boolean, ms = 500): NewEventOf<'run.heartbeat.answered'> => ({
    stream,
    type: 'run.heartbeat.answered',
    data: { runId: 'r1', status, cancelRequested },
    at: at(ms),
  }),
  pushed: (ms = 400): NewEventOf<'run.cancel.pushed'> => ({
    stream,
    type: 'run.cancel.pushed',
    data: { runId: 'r1', frameId: `x-${ms}` },
    at: at(ms),
  }),
  completion: (status: number, ms: number): NewEventOf<'run.completion.answered'> => ({
    stream,
    type: 'run.completion.answered',
    data: { runId: 'r1', status },
    at: at(ms),
  }),
  due: (ms: number): NewEventOf<'run.completion.due'> => ({ stream, type: 'run.completion.due', data: { runId: 'r1' }, at: at(ms) }),
};

const spec = (...given: RunInput[]) => deciderSpec(runDecider, initialRunExecution(), given);

const types = (decisions: readonly RunDecision[] | null) => (decisions === null ? ['(ignored)'] : decisions.map((d) => d.type));

describe('a claimed run on its computer', () => {
  it('given a hand-over, then it is executed with one deadline for the whole run, resuming the lane session', () => {
    const decisions = spec().when(input.handed('sess-1', 60));
    expect(types(decisions)).toEqual(['run.execution.requested']);
    expect(decisionOf(decisions, 'run.execution.requested').data).toEqual({ runId: 'r1', lane: 'L', deadlineAt: at(60_000), resume: 'sess-1' });
  });

  it('given budget 0, then there is no deadline', () => {
    expect(decisionOf(spec().when(input.handed(null, 0)), 'run.execution.requested').data.deadlineAt).toBeNull();
  });

  it('given an announced session id, then the lane remembers it at once, and only once', () => {
    const s = spec(input.handed(), input.began());
    const decisions = s.when(input.announced('sess-9'));
    expect(decisions).toEqual([
      { stream: 'c1/run:r1', type: 'lane.session.remembered', data: { lane: 'L', sessionId: 'sess-9', runId: 'r1' }, at: at(20) },
    ]);
    expect(types(s.when(input.announced('sess-9', 30)))).toEqual([]);
  });

  it('given a clean exit with a reply, then it is completed ok with the reply', () => {
    const decisions = spec(input.handed(), input.began()).when(input.exited());
    expect(decisionOf(decisions, 'run.completion.requested').data).toEqual({ runId: 'r1', attempt: 1, result: { ok: true }, reply: 'done' });
  });

  it('given an exit that recorded usage, then its completion carries it, a retry after a failed one too (docs/rules.md#wire-and-cli usage on complete)', () => {
    const usage = { costUsd: 0.0123, inputTokens: 12 };
    const s = spec(input.handed(), input.began());
    expect(decisionOf(s.when(input.exited({ usage })), 'run.completion.requested').data).toEqual({
      runId: 'r1',
      attempt: 1,
      result: { ok: true },
      reply: 'done',
      usage,
    });
    const retrying = decisionOf(s.when(input.completion(503, 1100)), 'run.completion.retrying');
    expect(decisionOf(s.when(input.due(retrying.data.notBefore - T0)), 'run.completion.requested').data).toMatchObject({ attempt: 2, usage });
    // A failed turn cost something too.
    const failed = spec(input.handed(), input.began()).when(input.exited({ exitCode: 1, reply: null, usage }));
    expect(decisionOf(failed, 'run.completion.requested').data).toMatchObject({ result: { ok: false }, usage });
  });

  it('given an ordinary failure, then the session it announced is forgotten and the run completes failed', () => {
    const decisions = spec(input.handed('old'), input.began(4242, 'old'), input.announced('new')).when(
      input.exited({ exitCode: 3, reply: null, stderrTail: 'boom' }),
    );
    expect(types(decisions)).toEqual(['lane.session.forgotten', 'run.completion.requested']);
    expect(decisionOf(decisions, 'lane.session.forgotten').data.sessionId).toBe('new');
    expect(decisionOf(decisions, 'run.completion.requested').data.result).toEqual({ ok: false, error: 'the agent exited with code 3: boom' });
  });

  it('given a timeout, then the session is kept and the error carries the unfinished answer', () => {
    const decisions = spec(input.handed(null, 5400), input.began(), input.announced('s1')).when(
      input.exited({ outcome: 'timed_out', exitCode: null, reply: null, tail: 'half an answ' }),
    );
    expect(types(decisions)).toEqual(['run.completion.requested']);
    expect(decisionOf(decisions, 'run.completion.requested').data.result.error).toBe(
      'timed out after about 1.5 hours, its budget — unfinished answer: …half an answ',
    );
  });

  it('given a resume the agent refuses, then the session is forgotten and the turn runs fresh inside the same deadline', () => {
    const s = spec(input.handed('gone', 100), input.began(4242, 'gone'));
    const decisions = s.when(input.exited({ exitCode: 1, reply: null, stderrTail: 'No conversation found with session ID: gone' }, 2_000));
    expect(types(decisions)).toEqual(['lane.session.forgotten', 'run.execution.requested']);
    expect(decisionOf(decisions, 'run.execution.requested').data).toEqual({ runId: 'r1', lane: 'L', deadlineAt: at(100_000), resume: null });
  });

  it("given the agent's terminal event says the turn failed, then it fails with the agent's words, even after exit 0", () => {
    const atZero = spec(input.handed(), input.began()).when(
      input.exited({ exitCode: 0, reply: null, agentError: 'stream disconnected before completion' }),
    );
    expect(decisionOf(atZero, 'run.completion.requested').data.result).toEqual({
      ok: false,
      error: 'the agent reported a failure: stream disconnected before completion',
    });
    const atOne = spec(input.handed(), input.began()).when(
      input.exited({ exitCode: 1, reply: null, agentError: 'error_max_turns', stderrTail: 'x' }),
    );
    expect(decisionOf(atOne, 'run.completion.requested').data.result).toEqual({
      ok: false,
      error: 'the agent reported a failure (exit code 1): error_max_turns',
    });
  });

  it('given a resume refused in the terminal event (Claude errors[], Codex turn.failed at exit 0), then the turn runs fresh', () => {
    for (const refused of [
      { exitCode: 1, reply: null, agentError: 'error_during_execution: No conversation found with session ID: gone' },
      { exitCode: 0, reply: null, agentError: 'thread/read failed: thread not loaded: gone' },
    ]) {
      const decisions = spec(input.handed('gone', 100), input.began(4242, 'gone')).when(input.exited(refused, 2_000));
      expect(types(decisions)).toEqual(['lane.session.forgotten', 'run.execution.requested']);
    }
  });

  it('given a refusal that named a new session (Claude does), then that one is forgotten too before the fresh turn', () => {
    const s = spec(input.handed('gone', 100), input.began(4242, 'gone'), input.announced('never-kept'));
    const decisions = s.when(
      input.exited({ exitCode: 1, reply: null, agentError: 'error_during_execution: No conversation found with session ID: gone' }, 2_000),
    );
    expect(types(decisions)).toEqual(['lane.session.forgotten', 'lane.session.forgotten', 'run.execution.requested']);
    expect(decisions!.filter((d) => d.type === 'lane.session.forgotten').map((d) => d.data.sessionId)).toEqual(['gone', 'never-kept']);
  });

  it('given a resume the agent refuses once the deadline has passed, or after a cancel, then the turn is not run again', () => {
    const refused = { exitCode: 1, reply: null, stderrTail: 'No conversation found with session ID: gone' };
    const late = spec(input.handed('gone', 100), input.began(4242, 'gone')).when(input.exited(refused, 100_000));
    expect(types(late)).not.toContain('run.execution.requested');
    const cancelled = spec(input.handed('gone', 100), input.began(4242, 'gone'), input.heartbeat(200, true)).when(input.exited(refused, 2_000));
    expect(types(cancelled)).not.toContain('run.execution.requested');
  });

  it('given a cancel from the heartbeat while executing, then its process group is killed and it completes with the marker', () => {
    const s = spec(input.handed(), input.began(777));
    expect(types(s.when(input.heartbeat(200, true)))).toEqual(['run.cancel.decided', 'run.kill.requested']);
    expect(types(s.when(input.heartbeat(200, true, 600)))).toEqual(['(ignored)']);
    const done = s.when(input.exited({ outcome: 'cancelled', exitCode: null, reply: null, tail: 'partial' }));
    expect(decisionOf(done, 'run.completion.requested').data.result).toEqual({ ok: false, error: 'cancelled_by_user' });
  });

  it('given a cancel pushed by the board while executing, then it is decided as a heartbeat cancel is, once: a later heartbeat or push is ignored', () => {
    const s = spec(input.handed(), input.began(777));
    const pushed = s.when(input.pushed());
    expect(types(pushed)).toEqual(['run.cancel.decided', 'run.kill.requested']);
    expect(decisionOf(pushed, 'run.kill.requested').data).toMatchObject({ pid: 777, reason: 'cancelled_by_user' });
    expect(types(s.when(input.heartbeat(200, true, 600)))).toEqual(['(ignored)']);
    expect(types(s.when(input.pushed(700)))).toEqual(['(ignored)']);
    const done = s.when(input.exited({ outcome: 'cancelled', exitCode: null, reply: null }));
    expect(decisionOf(done, 'run.completion.requested').data.result).toEqual({ ok: false, error: 'cancelled_by_user' });
  });

  it('given a cancel pushed before the claimed run started, then it never starts and is completed with the marker', () => {
    const s = spec();
    expect(types(s.when(input.pushed(0)))).toEqual(['run.cancel.decided', 'run.completion.requested']);
    expect(types(s.when(input.handed()))).toEqual(['(ignored)']);
  });

  it('given a cancel of a claimed run that has not started, then it never starts and is completed with the marker', () => {
    const s = spec();
    expect(types(s.when(input.heartbeat(200, true, 0)))).toEqual(['run.cancel.decided', 'run.completion.requested']);
    expect(types(s.when(input.handed()))).toEqual(['(ignored)']);
  });

  it('given the board resolved it mid-run, then the process is killed and nothing is posted', () => {
    const s = spec(input.handed(), input.began(777));
    expect(types(s.when(input.heartbeat(410, false)))).toEqual(['run.resolved.elsewhere', 'run.kill.requested']);
    expect(types(s.when(input.exited({ outcome: 'killed', exitCode: null, reply: null })))).toEqual(['run.settled']);
    expect(s.state.phase).toBe('settled');
  });

  it('given failed completions, then they are retried after 1, 3, 9, 30, 60, 120, 180, 240 s, then left unreported and reported again on redelivery', () => {
    const s = spec(input.handed(), input.began(), input.exited());
    let now = 1000;
    const waits: number[] = [];
    for (;;) {
      const answer = s.when(input.completion(503, now));
      const [retrying] = decisionsOf(answer, 'run.completion.retrying');
      if (!retrying) {
        expect(types(answer)).toEqual(['run.completion.paused']);
        break;
      }
      waits.push((retrying.data.notBefore - at(now)) / 1000);
      expect(types(s.when(input.due(now + 10)))).toEqual(['(ignored)']);
      now = retrying.data.notBefore - T0;
      expect(types(s.when(input.due(now)))).toEqual(['run.completion.requested']);
    }
    expect(waits).toEqual([1, 3, 9, 30, 60, 120, 180, 240]);
    // Unreported, not settled: still heartbeated, and a redelivery (or a restart) reports it again.
    expect(s.state.phase).toBe('completing');
    const again = s.when(input.due(now + 60_000));
    expect(decisionOf(again, 'run.completion.requested').data).toMatchObject({ attempt: 10, result: { ok: true } });
    expect(types(s.when(input.completion(200, now + 60_100)))).toEqual(['run.settled']);
  });

  it('given the board refuses the reply, then the session the turn announced is forgotten and it completes failed, without the reply', () => {
    const s = spec(input.handed('old'), input.began(4242, 'old'), input.announced('old'), input.exited());
    const decisions = s.when({ stream, type: 'run.reply.refused', data: { runId: 'r1', status: 413 }, at: at(1100) });
    expect(types(decisions)).toEqual(['lane.session.forgotten', 'run.completion.requested']);
    expect(decisionOf(decisions, 'lane.session.forgotten').data).toMatchObject({ sessionId: 'old', reason: { code: 'reply.refused' } });
    expect(decisionOf(decisions, 'run.completion.requested').data).toEqual({
      runId: 'r1',
      attempt: 2,
      result: { ok: false, error: 'posting the reply failed with HTTP 413' },
      reply: null,
    });
  });

  it('given the board acknowledges the completion, then the run is settled as reported', () => {
    const s = spec(input.handed(), input.began(), input.exited(), input.completion(503, 2000), input.due(3000));
    const decisions = s.when(input.completion(200, 3100));
    expect(decisionOf(decisions, 'run.settled').data.reported).toBe(true);
    expect(types(s.when(input.completion(200, 3200)))).toEqual(['(ignored)']);
  });
});
