/**
 * The stand-ins of test/fixtures/agents behave as the real CLIs do where runledger depends on it, so
 * the end-to-end tests that use them prove something about `claude` and `codex` themselves.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentBin } from '../../fixtures/agents/bin.ts';

const dir = mkdtempSync(join(tmpdir(), 'runledger-standins-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const bin = agentBin(dir);
const run = (command: string) => {
  const result = spawnSync('/bin/sh', ['-c', command], { input: 'hi', encoding: 'utf8', env: { ...process.env, ...bin.env }, timeout: 10_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr.trim() };
};

describe('the claude and codex stand-ins', () => {
  it('refuse a terminal UI on a pipe, as the real ones do', () => {
    expect(run('claude')).toMatchObject({ status: 1, stderr: expect.stringContaining('Raw mode is not supported') });
    expect(run('codex')).toMatchObject({ status: 1, stderr: 'Error: stdin is not a terminal' });
  });

  it('refuse stream-json without --verbose in print mode, in the real words', () => {
    expect(run('claude -p --output-format stream-json')).toMatchObject({
      status: 1,
      stderr: 'Error: When using --print, --output-format=stream-json requires --verbose',
    });
  });

  it('answer in text without the event flags, and in events with them', () => {
    expect(run('claude -p')).toMatchObject({ status: 0, stdout: expect.stringMatching(/^turn 1 \(claude-sonnet-4-5\): hi\n$/) });
    const events = run('claude -p --output-format stream-json --verbose')
      .stdout.trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    // A tool call (what the run's progress shows), then the answer, then the result.
    expect(events.map((e) => e.type)).toEqual(['system', 'assistant', 'assistant', 'result']);
    expect(events[1].message.content[0]).toMatchObject({ type: 'tool_use', name: 'Bash', input: { command: 'echo step 1' } });
    expect(events[3]).toMatchObject({ subtype: 'success', is_error: false, session_id: events[0].session_id, total_cost_usd: 0.0123 });
    const codex = run('codex exec --json')
      .stdout.trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(codex.map((e) => e.type)).toEqual([
      'thread.started',
      'turn.started',
      'item.completed',
      'item.started',
      'item.completed',
      'item.completed',
      'turn.completed',
    ]);
    expect(codex[3].item).toMatchObject({ type: 'command_execution', status: 'in_progress', exit_code: null });
  });

  it('refuse to resume what they do not have, in the real words', () => {
    const claude = run("claude -p --output-format stream-json --verbose --resume 'gone'");
    expect(claude.status).toBe(1);
    expect(JSON.parse(claude.stdout.trim().split('\n').pop()!)).toMatchObject({
      subtype: 'error_during_execution',
      is_error: true,
      errors: ['No conversation found with session ID: gone'],
    });
    expect(run("codex exec --json resume 'gone'")).toMatchObject({
      status: 1,
      stderr: 'Error: thread/read: thread/read failed: thread not loaded: gone (code -32600)',
    });
  });
});
