import { describe, expect, it } from 'vitest';
import { sessionAfter, sessionMomentOf, shellQuote, shouldRetryFresh, turnCommand } from '../../../actors/run/resume.ts';
import { claudeStreamJsonReader, plainReader } from '../../../adapters/agent/outputReaders.ts';
import { FakeClock, systemClock } from '../../../runtime/actors/clock.ts';
import { agentCommand, bounded, running, start, until, watched } from './agents.ts';

describe('an agent that answers', () => {
  it('given a prompt on stdin, then its stdout is the reply and its exit is recorded', async () => {
    const agent = await start({
      command: agentCommand('echo.sh'),
      prompt: 'what is 6 × 7?',
      reader: plainReader(),
      clock: systemClock,
      deadlineAt: null,
    });
    expect(agent.pid).toBeGreaterThan(0);
    expect(agent.pgid).toBe(agent.pid);
    const result = await bounded(agent.result, 10_000, 'the agent did not finish');
    expect(result).toMatchObject({
      outcome: 'exited',
      exitCode: 0,
      signal: null,
      reply: { ok: true, text: 'reply to: what is 6 × 7?', truncated: false },
      stderrTail: 'echo: done',
      sessionId: null,
      cancelReason: null,
      error: null,
    });
    // A cancel after the end changes nothing.
    agent.cancel('too late');
    agent.kill({ force: true });
    expect((await agent.result).outcome).toBe('exited');
  });

  it('given an environment overlay, then the command sees it; given a non-zero exit, then that is the outcome', async () => {
    const agent = await start({
      command: agentCommand('echo.sh', '3'),
      prompt: 'hi',
      env: { RUNLEDGER_SESSION_ID: 'lane-session' },
      reader: plainReader(),
      clock: systemClock,
      deadlineAt: null,
    });
    const result = await bounded(agent.result, 10_000, 'the agent did not finish');
    expect(result.outcome).toBe('exited');
    expect(result.exitCode).toBe(3);
    expect(result.reply).toEqual({ ok: true, text: 'reply to: hi (session lane-session)', truncated: false });
  });

  it('given a command that never reads its stdin, then a large prompt does not break anything', async () => {
    const agent = await start({
      command: `${shellQuote(process.execPath)} -e "process.stdout.write('ignored you')"`,
      prompt: 'p'.repeat(4 * 1024 * 1024),
      reader: plainReader(),
      clock: systemClock,
      deadlineAt: null,
    });
    const result = await bounded(agent.result, 10_000, 'the agent did not finish');
    expect(result).toMatchObject({ outcome: 'exited', exitCode: 0, reply: { ok: true, text: 'ignored you' } });
  });

  it('given a working directory that does not exist, then the result says the command could not start', async () => {
    const agent = await start({
      command: 'true',
      cwd: '/nonexistent/runledger',
      prompt: '',
      reader: plainReader(),
      clock: systemClock,
      deadlineAt: null,
    });
    const result = await bounded(agent.result, 10_000, 'no result');
    expect(result.outcome).toBe('exited');
    expect(result.exitCode).toBeNull();
    expect(result.error).toMatch(/ENOENT/);
  });

  it('given an agent that exits leaving a process that holds its output open, then the run ends after the drain window', async () => {
    const agent = await start({
      command: '(sleep 30 &) ; echo answered',
      prompt: '',
      reader: plainReader(),
      clock: systemClock,
      deadlineAt: null,
      drainMs: 200,
    });
    const result = await bounded(agent.result, 10_000, 'the run waited on the leftover process');
    expect(result).toMatchObject({ outcome: 'exited', exitCode: 0, reply: { ok: true, text: 'answered' } });
  });
});

describe('the deadline', () => {
  it('given an agent that announces its session and then hangs, when the deadline passes, then it is timed out, keeps its session, and its unfinished answer is salvaged', async () => {
    const clock = new FakeClock(1_000_000);
    const reader = watched(claudeStreamJsonReader());
    const agent = await start({
      command: agentCommand('hang.mjs', 'claude', 'long-session'),
      prompt: 'fix it',
      reader,
      clock,
      deadlineAt: clock.now() + 7_200_000,
    });
    const announced = await bounded(new Promise<string>((resolve) => agent.onSessionId(resolve)), 10_000, 'no session id');
    expect(announced).toBe('long-session');
    // Remembered at once: the run has not ended, and a kill at hour two must not lose it.
    expect(sessionAfter('announced', null, announced)).toBe('long-session');
    await reader.printed('Half of the answer');

    clock.advance(7_200_000);
    const result = await bounded(agent.result, 10_000, 'the timed-out agent did not end');
    expect(result.outcome).toBe('timed_out');
    expect(result.signal).toBe('SIGTERM');
    expect(result.sessionId).toBe('long-session');
    expect(result.tail).toBe('Half of the answer: the cause is');
    expect(result.reply.ok).toBe(false);
    expect(result.elapsedMs).toBe(7_200_000);
    expect(sessionAfter(sessionMomentOf(result), null, result.sessionId)).toBe('long-session');
  });

  it('given a short deadline on the real clock, then the agent is stopped when it passes', async () => {
    const startedAt = Date.now();
    const agent = await start({
      command: agentCommand('hang.mjs', 'plain'),
      prompt: '',
      reader: plainReader(),
      clock: systemClock,
      deadlineAt: startedAt + 1_000,
    });
    const result = await bounded(agent.result, 10_000, 'the agent outlived its deadline');
    expect(result.outcome).toBe('timed_out');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1_000);
    expect(running(agent.pid!)).toBe(false);
  });
});

describe('stopping an agent', () => {
  it('given a running agent, when it is cancelled, then the outcome is cancelled, with the reason and the tail', async () => {
    const reader = watched(plainReader());
    const agent = await start({ command: agentCommand('hang.mjs', 'plain'), prompt: '', reader, clock: systemClock, deadlineAt: null });
    await reader.printed('first half');
    agent.cancel('cancelled_by_user');
    agent.cancel('a second cancel');
    const result = await bounded(agent.result, 10_000, 'the cancelled agent did not end');
    expect(result.outcome).toBe('cancelled');
    expect(result.cancelReason).toBe('cancelled_by_user');
    expect(result.tail).toBe('working on it: the first half of the answer');
  });

  it('given an agent that ignores SIGTERM, then SIGKILL follows once the grace has passed, and not before', async () => {
    const clock = new FakeClock();
    const reader = watched(plainReader());
    const agent = await start({ command: agentCommand('stubborn.mjs'), prompt: '', reader, clock, deadlineAt: null, killGraceMs: 5_000 });
    await reader.printed('ready');
    const stubborn = Number(/ready (\d+)/.exec(reader.replySoFar())?.[1]);
    agent.cancel('stop');
    await reader.printed('ignoring SIGTERM');
    clock.advance(4_999);
    let ended = false;
    void agent.result.then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(ended).toBe(false);
    expect(running(stubborn)).toBe(true);

    clock.advance(1);
    const result = await bounded(agent.result, 10_000, 'SIGKILL did not end the agent');
    expect(result.outcome).toBe('cancelled');
    expect(result.tail).toContain('ignoring SIGTERM');
    await until(() => !running(stubborn), 2_000, 'the stubborn agent survived SIGKILL');
  });

  it('given an agent whose grandchild would outlive it, when it is stopped, then the whole group dies', async () => {
    const reader = watched(plainReader());
    const agent = await start({
      command: agentCommand('grandchild.mjs'),
      prompt: '',
      reader,
      clock: systemClock,
      deadlineAt: null,
      killGraceMs: 300,
    });
    await reader.printed('\n');
    const grandchild = Number(/grandchild (\d+)/.exec(reader.replySoFar())?.[1]);
    expect(running(grandchild)).toBe(true);

    agent.cancel('cancelled_by_user');
    const result = await bounded(agent.result, 10_000, 'the group did not end');
    expect(result.outcome).toBe('cancelled');
    await until(() => !running(grandchild), 2_000, `grandchild ${grandchild} survived its group`);
  });

  it('given kill(), then the outcome is killed; with force, SIGKILL goes at once', async () => {
    const reader = watched(plainReader());
    const agent = await start({ command: agentCommand('stubborn.mjs'), prompt: '', reader, clock: new FakeClock(), deadlineAt: null });
    await reader.printed('ready');
    agent.kill({ force: true });
    const result = await bounded(agent.result, 10_000, 'the killed agent did not end');
    expect(result.outcome).toBe('killed');
    expect(result.signal).toBe('SIGKILL');
  });
});

describe('a resumed turn that the agent refuses', () => {
  it('given a session the agent no longer has, then the refusal is recognised and the fresh retry answers within the same deadline', async () => {
    const clock = systemClock;
    const deadlineAt = clock.now() + 60_000;
    const template = agentCommand('claude-like.sh');
    const first = turnCommand(template, 'claude', 'lost-session');
    expect(first.command).toContain("--resume 'lost-session'");
    const refused = await (
      await start({ command: first.command, env: first.env, prompt: 'again', reader: claudeStreamJsonReader(), clock, deadlineAt })
    ).result;
    expect(refused.stderrTail).toBe('No conversation found with session ID: lost-session');
    expect(shouldRetryFresh({ resuming: first.resuming, result: refused, now: clock.now(), deadlineAt })).toBe(true);
    const remembered = sessionAfter('resume_refused', 'lost-session', refused.sessionId);
    expect(remembered).toBeNull();

    const fresh = turnCommand(template, 'claude', remembered);
    const answered = await (
      await start({ command: fresh.command, env: fresh.env, prompt: 'again', reader: claudeStreamJsonReader(), clock, deadlineAt })
    ).result;
    expect(answered.reply).toEqual({ ok: true, text: 'fresh: again', truncated: false });
    expect(sessionAfter(sessionMomentOf(answered), remembered, answered.sessionId)).toBe('fresh-session');
  });

  it('given a session the agent has, then it resumes it', async () => {
    const turn = turnCommand(agentCommand('claude-like.sh'), 'claude', 'known-session');
    const result = await (
      await start({ command: turn.command, env: turn.env, prompt: 'more', reader: claudeStreamJsonReader(), clock: systemClock, deadlineAt: null })
    ).result;
    expect(result.reply).toEqual({ ok: true, text: 'resumed: more', truncated: false });
    expect(result.sessionId).toBe('known-session');
  });
});
