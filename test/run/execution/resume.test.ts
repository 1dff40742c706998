import { describe, expect, it } from 'vitest';
import type { AgentResult } from '../../../actors/run/agentResult.ts';
import {
  agentKindOf,
  looksLikeRefusedResume,
  SESSION_ENV,
  type SessionMoment,
  sessionAfter,
  sessionMomentOf,
  shouldRetryFresh,
  turnCommand,
} from '../../../actors/run/resume.ts';

type Ending = Pick<AgentResult, 'outcome' | 'exitCode' | 'reply' | 'stderrTail' | 'tail'>;
const ended = (over: Partial<Ending>): Ending => ({
  outcome: 'exited',
  exitCode: 1,
  reply: { ok: false, reason: 'the agent wrote no result event' },
  stderrTail: '',
  tail: '',
  ...over,
});

describe('the command line of a turn', () => {
  it('given no session, then the command is the template, and the session variable is removed', () => {
    const turn = turnCommand('claude -p --output-format stream-json --verbose', 'claude', null);
    expect(turn).toEqual({ command: 'claude -p --output-format stream-json --verbose', env: { [SESSION_ENV]: undefined }, resuming: null });
  });

  it('given a claude session, then --resume is appended and the id is in the environment', () => {
    const turn = turnCommand('claude -p --output-format stream-json --verbose', 'claude', 'abc-123');
    expect(turn.command).toBe("claude -p --output-format stream-json --verbose --resume 'abc-123'");
    expect(turn.env).toEqual({ [SESSION_ENV]: 'abc-123' });
    expect(turn.resuming).toBe('abc-123');
  });

  it('given a codex session, then the resume subcommand goes where {resume} says, or at the end', () => {
    expect(turnCommand('codex exec --json {resume} -', 'codex', 't-9').command).toBe("codex exec --json resume 't-9' -");
    expect(turnCommand('codex exec --json {resume} -', 'codex', null).command).toBe('codex exec --json  -');
    expect(turnCommand('codex exec --json', 'codex', 't-9').command).toBe("codex exec --json resume 't-9'");
  });

  it('given a plain command, then only {resume} or the environment carries the session', () => {
    expect(turnCommand('./agent.sh', 'plain', 's1')).toEqual({ command: './agent.sh', env: { [SESSION_ENV]: 's1' }, resuming: 's1' });
    expect(turnCommand('./agent.sh {resume}', 'plain', 's1').command).toBe("./agent.sh --resume 's1'");
    expect(turnCommand('./agent.sh {resume}', 'plain', null).command).toBe('./agent.sh ');
  });

  it('given a remembered id that is not a plain token, then the turn starts fresh rather than put it on a command line', () => {
    const turn = turnCommand('claude -p --output-format stream-json', 'claude', "x'; touch /tmp/pwned; '");
    expect(turn.resuming).toBeNull();
    expect(turn.command).toBe('claude -p --output-format stream-json');
  });

  it('tells the reader a command needs from the command itself', () => {
    expect(agentKindOf('claude -p --output-format stream-json --verbose')).toBe('claude');
    expect(agentKindOf('/usr/local/bin/claude -p --output-format=stream-json')).toBe('claude');
    expect(agentKindOf('claude -p')).toBe('plain');
    expect(agentKindOf('codex exec --json')).toBe('codex');
    expect(agentKindOf('codex exec')).toBe('plain');
    expect(agentKindOf('node my-agent.mjs --json')).toBe('plain');
  });
});

describe('a refused resume', () => {
  it.each([
    ['Claude', { stderrTail: 'No conversation found with session ID: abc' }],
    [
      'an error result',
      { reply: { ok: false as const, reason: 'the agent ended with an error (success): No conversation found with session ID: abc' } },
    ],
    ['session not found', { stderrTail: 'Error: session abc not found' }],
    ['thread not found', { stderrTail: 'error: thread not found' }],
    ['no rollout', { stderrTail: 'Error: No rollout found for thread id abc' }],
    ['cannot resume', { tail: 'fatal: could not resume session abc' }],
  ])('is recognised from %s', (_, over) => {
    expect(looksLikeRefusedResume('abc', ended(over))).toBe(true);
  });

  it('is not seen in a fresh turn, a zero exit, a stopped run, a failed start, or an unrelated failure', () => {
    const refusal = { stderrTail: 'No conversation found with session ID: abc' };
    expect(looksLikeRefusedResume(null, ended(refusal))).toBe(false);
    expect(looksLikeRefusedResume('abc', ended({ ...refusal, exitCode: 0 }))).toBe(false);
    expect(looksLikeRefusedResume('abc', ended({ ...refusal, outcome: 'timed_out', exitCode: null }))).toBe(false);
    expect(looksLikeRefusedResume('abc', ended({ ...refusal, exitCode: null }))).toBe(false);
    expect(looksLikeRefusedResume('abc', ended({ stderrTail: 'Error: rate limited' }))).toBe(false);
  });

  it('is retried fresh only while the one deadline has time left, and never after a cancel', () => {
    const result = ended({ stderrTail: 'No conversation found with session ID: abc' });
    expect(shouldRetryFresh({ resuming: 'abc', result, now: 1_000, deadlineAt: 5_000 })).toBe(true);
    expect(shouldRetryFresh({ resuming: 'abc', result, now: 1_000, deadlineAt: null })).toBe(true);
    expect(shouldRetryFresh({ resuming: 'abc', result, now: 5_000, deadlineAt: 5_000 })).toBe(false);
    expect(shouldRetryFresh({ resuming: 'abc', result, now: 1_000, deadlineAt: 5_000, cancelRequested: true })).toBe(false);
  });
});

describe('what a lane remembers of its session', () => {
  const table: [SessionMoment, string | null, string | null, string | null][] = [
    // moment,        previous, announced, remembered
    ['announced', 'old', 'new', 'new'],
    ['announced', null, 'new', 'new'],
    ['succeeded', 'old', 'new', 'new'],
    ['succeeded', 'old', null, 'old'],
    ['timed_out', null, 'new', 'new'],
    ['timed_out', 'old', null, 'old'],
    ['cancelled', 'old', 'new', 'new'],
    ['killed', 'old', 'new', 'new'],
    ['failed', 'old', 'new', null],
    ['failed', 'old', 'old', null],
    ['failed', 'old', null, 'old'],
    ['rejected', null, 'new', null],
    ['rejected', 'old', null, 'old'],
    ['resume_refused', 'old', null, null],
    ['resume_refused', 'old', 'old', null],
  ];
  it.each(table)('after %s (previous %s, announced %s): %s', (moment, previous, announced, remembered) => {
    expect(sessionAfter(moment, previous, announced)).toBe(remembered);
  });

  it('reads the moment from a finished process', () => {
    const ok = { ok: true as const, text: 'hi', truncated: false };
    const none = { ok: false as const, reason: 'nothing' };
    expect(sessionMomentOf({ outcome: 'exited', exitCode: 0, reply: ok })).toBe('succeeded');
    expect(sessionMomentOf({ outcome: 'exited', exitCode: 0, reply: none })).toBe('failed');
    expect(sessionMomentOf({ outcome: 'exited', exitCode: 2, reply: ok })).toBe('failed');
    expect(sessionMomentOf({ outcome: 'timed_out', exitCode: null, reply: none })).toBe('timed_out');
    expect(sessionMomentOf({ outcome: 'cancelled', exitCode: null, reply: none })).toBe('cancelled');
    expect(sessionMomentOf({ outcome: 'killed', exitCode: null, reply: none })).toBe('killed');
  });
});
