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
    const turn = turnCommand('claude -p --output-format stream-json --verbose', 'claude', "x'; touch /tmp/pwned; '");
    expect(turn.resuming).toBeNull();
    expect(turn.command).toBe('claude -p --output-format stream-json --verbose');
  });

  it('tells the reader a command needs from its program', () => {
    expect(agentKindOf('claude -p --output-format stream-json --verbose')).toBe('claude');
    expect(agentKindOf('/usr/local/bin/claude -p --output-format=stream-json')).toBe('claude');
    expect(agentKindOf('claude')).toBe('claude');
    expect(agentKindOf('claude -p')).toBe('claude');
    expect(agentKindOf('claude -p --output-format json')).toBe('claude');
    expect(agentKindOf('claude -p --output-format text')).toBe('plain');
    expect(agentKindOf('ANTHROPIC_MODEL=x claude')).toBe('claude');
    expect(agentKindOf('codex')).toBe('codex');
    expect(agentKindOf('codex exec')).toBe('codex');
    expect(agentKindOf('codex exec --json')).toBe('codex');
    expect(agentKindOf('node my-agent.mjs --json')).toBe('plain');
    expect(agentKindOf('claude-like.sh')).toBe('plain');
  });
});

describe('real agents run headless, as the user typed them (docs/rules.md#computer-behaviour)', () => {
  const fresh: [string, string][] = [
    ['claude', 'claude -p --output-format stream-json --verbose'],
    ['/usr/local/bin/claude', '/usr/local/bin/claude -p --output-format stream-json --verbose'],
    ['claude --model X', 'claude -p --output-format stream-json --verbose --model X'],
    ['claude -p --model X', 'claude --output-format stream-json --verbose -p --model X'],
    ['claude --print --output-format=stream-json', 'claude --verbose --print --output-format=stream-json'],
    ['claude -p --output-format stream-json --verbose', 'claude -p --output-format stream-json --verbose'],
    [
      'claude --permission-mode acceptEdits --mcp-config "my mcp.json"',
      'claude -p --output-format stream-json --verbose --permission-mode acceptEdits --mcp-config "my mcp.json"',
    ],
    ['claude -p --output-format json', 'claude -p --output-format json'],
    ['claude --output-format text', 'claude -p --output-format text'],
    ['DEBUG=1 claude 2>>agent.log', 'DEBUG=1 claude -p --output-format stream-json --verbose 2>>agent.log'],
    ['codex', 'codex exec --json'],
    ['codex exec', 'codex exec --json'],
    ['codex exec --skip-git-repo-check', 'codex exec --json --skip-git-repo-check'],
    ['codex -c model=o3 exec --json', 'codex -c model=o3 exec --json'],
    ['codex --experimental-json exec', 'codex --experimental-json exec'],
    ['codex -m o3 --full-auto', 'codex exec --json -m o3 --full-auto'],
    ['codex e', 'codex e --json'],
    [
      'claude --append-system-prompt "be brief | kind" --verbose',
      'claude -p --output-format stream-json --append-system-prompt "be brief | kind" --verbose',
    ],
    ["'/opt/my tools/claude' -p", "'/opt/my tools/claude' --output-format stream-json --verbose -p"],
    ['./claude-like.sh --json', './claude-like.sh --json'],
    ['node agent.mjs', 'node agent.mjs'],
  ];
  it.each(fresh)('a fresh turn of %j runs %j', (typed, runs) => {
    expect(turnCommand(typed, agentKindOf(typed), null).command).toBe(runs);
  });

  const resumed: [string, string][] = [
    ['claude', "claude -p --output-format stream-json --verbose --resume 's-1'"],
    ['claude -p --model X', "claude --output-format stream-json --verbose -p --model X --resume 's-1'"],
    ['claude 2>/dev/null', "claude -p --output-format stream-json --verbose --resume 's-1' 2>/dev/null"],
    ['codex', "codex exec --json resume 's-1'"],
    ['codex exec --skip-git-repo-check', "codex exec --json --skip-git-repo-check resume 's-1'"],
    ['codex exec --json -', "codex exec --json resume 's-1' -"],
    ['claude --model X | tee -a turns.log', "claude -p --output-format stream-json --verbose --model X --resume 's-1' | tee -a turns.log"],
    ['codex exec --json {resume} -', "codex exec --json resume 's-1' -"],
    ["claude --model 'my model' {resume}", "claude -p --output-format stream-json --verbose --model 'my model' --resume 's-1'"],
    ['./agent.sh', './agent.sh'],
  ];
  it.each(resumed)('a resumed turn of %j runs %j', (typed, runs) => {
    expect(turnCommand(typed, agentKindOf(typed), 's-1').command).toBe(runs);
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
    ['Codex thread <id> not found', { stderrTail: 'Error: thread abc not found' }],
    ['Codex thread/read failed', { stderrTail: 'Error: thread/read: thread/read failed: thread not loaded: abc (code -32600)' }],
    [
      'a Claude error result with errors[]',
      { reply: { ok: false as const, reason: 'error_during_execution: No conversation found with session ID: abc' } },
    ],
    ['a Codex turn.failed after a zero exit', { exitCode: 0, reply: { ok: false as const, reason: 'thread abc not found' } }],
    ['cannot resume', { tail: 'fatal: could not resume session abc' }],
  ])('is recognised from %s', (_, over) => {
    expect(looksLikeRefusedResume('abc', ended(over))).toBe(true);
  });

  it('is not seen in a fresh turn, a zero exit with a reply, a stopped run, a failed start, or an unrelated failure', () => {
    const refusal = { stderrTail: 'No conversation found with session ID: abc' };
    expect(looksLikeRefusedResume(null, ended(refusal))).toBe(false);
    expect(looksLikeRefusedResume('abc', ended({ ...refusal, exitCode: 0, reply: { ok: true, text: 'done', truncated: false } }))).toBe(false);
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
