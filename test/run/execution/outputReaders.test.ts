import { describe, expect, it } from 'vitest';
import {
  capReply,
  claudeStreamJsonReader,
  codexJsonReader,
  type OutputReader,
  plainReader,
  REPLY_CAP_BYTES,
  readerFor,
} from '../../../adapters/agent/outputReaders.ts';

const json = (event: unknown): string => `${JSON.stringify(event)}\n`;

/** Feeds `text` to the reader in pieces of `size` bytes, cutting lines and characters anywhere. */
function feedInPieces(reader: OutputReader, text: string, size: number): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += size) reader.push(bytes.subarray(at, at + size));
  reader.end();
}

function sessionsHeard(reader: OutputReader): string[] {
  const heard: string[] = [];
  reader.onSessionId((id) => heard.push(id));
  return heard;
}

const claudeRun = [
  json({ type: 'system', subtype: 'init', session_id: 'sess-1', tools: [] }),
  json({ type: 'assistant', session_id: 'sess-1', message: { content: [{ type: 'text', text: 'Looking at the café’s logs…' }] } }),
  json({ type: 'assistant', session_id: 'sess-1', message: { content: [{ type: 'tool_use', name: 'Bash' }] } }),
  json({ type: 'assistant', session_id: 'sess-1', message: { content: [{ type: 'text', text: 'The answer is 42 €.' }] } }),
  json({ type: 'result', subtype: 'success', is_error: false, result: 'The answer is 42 €.', session_id: 'sess-1' }),
].join('');

describe('plainReader: the whole stdout is the reply', () => {
  it('given output split anywhere, even inside a character, then the reply is all of it, trimmed', () => {
    const reader = plainReader();
    feedInPieces(reader, '  Bonjour, ça va ? €€€\n', 1);
    expect(reader.finalReply()).toEqual({ ok: true, text: 'Bonjour, ça va ? €€€', truncated: false });
    expect(reader.sessionId()).toBeNull();
  });

  it('given nothing but whitespace, then there is no usable reply, with the reason', () => {
    const reader = plainReader();
    feedInPieces(reader, '\n  \n', 3);
    expect(reader.finalReply()).toEqual({ ok: false, reason: 'the agent printed nothing' });
  });

  it('given more than the cap, then the reply is cut to the cap, says so, and the tail still holds the end', () => {
    const reader = plainReader({ replyCapBytes: 100, tailBytes: 16 });
    feedInPieces(reader, `${'a'.repeat(500)}THE END`, 7);
    const reply = reader.finalReply();
    expect(reply.ok && reply.truncated).toBe(true);
    if (!reply.ok) return;
    expect(Buffer.byteLength(reply.text)).toBeLessThanOrEqual(100);
    expect(reply.text).toMatch(/^a+\n\n\[reply cut at 100 bytes: the agent wrote 507 bytes\]$/);
    expect(reader.unfinishedTail()).toBe('aaaaaaaaaTHE END');
  });

  it('given exactly the cap, then nothing is cut', () => {
    const reader = plainReader({ replyCapBytes: 10 });
    feedInPieces(reader, '0123456789', 4);
    expect(reader.finalReply()).toEqual({ ok: true, text: '0123456789', truncated: false });
  });
});

describe('claudeStreamJsonReader: Claude Code stream-json', () => {
  it.each([1, 2, 7, 64, 100_000])('given the events in pieces of %i bytes, then the result, the session and the tail come out whole', (size) => {
    const reader = claudeStreamJsonReader();
    const heard = sessionsHeard(reader);
    feedInPieces(reader, claudeRun, size);
    expect(heard).toEqual(['sess-1']);
    expect(reader.sessionId()).toBe('sess-1');
    expect(reader.finalReply()).toEqual({ ok: true, text: 'The answer is 42 €.', truncated: false });
    expect(reader.unfinishedTail()).toBe('Looking at the café’s logs…\nThe answer is 42 €.');
  });

  it('given the init line, then the session id is announced at that moment, before anything else arrives', () => {
    const reader = claudeStreamJsonReader();
    const heard = sessionsHeard(reader);
    reader.push(json({ type: 'system', subtype: 'init', session_id: 'early' }).slice(0, 20));
    expect(heard).toEqual([]);
    reader.push(json({ type: 'system', subtype: 'init', session_id: 'early' }).slice(20));
    expect(heard).toEqual(['early']);
    expect(reader.replySoFar()).toBe('');
  });

  it('given the same id on every line, and later a different one, then each distinct id is announced once', () => {
    const reader = claudeStreamJsonReader();
    const heard = sessionsHeard(reader);
    for (let i = 0; i < 5; i++) reader.push(json({ type: 'assistant', session_id: 'a', message: { content: [] } }));
    reader.push(json({ type: 'result', subtype: 'success', result: 'x', session_id: 'b' }));
    expect(heard).toEqual(['a', 'b']);
    const late: string[] = [];
    reader.onSessionId((id) => late.push(id));
    expect(late).toEqual(['b']);
  });

  it('given an id that is not a plain token, then it is not announced at all', () => {
    const reader = claudeStreamJsonReader();
    const heard = sessionsHeard(reader);
    reader.push(json({ type: 'system', subtype: 'init', session_id: "x'; rm -rf ~" }));
    reader.push(json({ type: 'system', subtype: 'init', session_id: 42 }));
    expect(heard).toEqual([]);
  });

  it('given a listener that throws, then the stream goes on and the reader still works', () => {
    const reader = claudeStreamJsonReader();
    reader.onSessionId(() => {
      throw new Error('listener bug');
    });
    const heard = sessionsHeard(reader);
    feedInPieces(reader, claudeRun, 50);
    expect(heard).toEqual(['sess-1']);
    expect(reader.finalReply().ok).toBe(true);
  });

  it('given malformed lines among the events, then they are skipped and the reply still comes out', () => {
    const reader = claudeStreamJsonReader();
    const noisy = ['Warning: something odd\n', '{"type": "assistant", broken\n', '[1,2,3]\n', 'null\n', '{}\n', claudeRun].join('');
    feedInPieces(reader, noisy, 5);
    expect(reader.finalReply()).toEqual({ ok: true, text: 'The answer is 42 €.', truncated: false });
  });

  it('given no result event, then there is no reply, and the reason quotes what the agent printed instead', () => {
    const reader = claudeStreamJsonReader();
    feedInPieces(reader, 'Invalid API key · Please run /login\n', 8);
    const reply = reader.finalReply();
    expect(reply).toEqual({ ok: false, reason: 'the agent wrote no result event; it printed: Invalid API key · Please run /login' });
  });

  it('given an error result, then there is no reply, and the reason carries the error', () => {
    const reader = claudeStreamJsonReader();
    reader.push(json({ type: 'result', subtype: 'error_max_turns', is_error: true, result: '' }));
    reader.end();
    expect(reader.finalReply()).toEqual({ ok: false, reason: 'the agent ended with an error (error_max_turns)' });
    const other = claudeStreamJsonReader();
    other.push(json({ type: 'result', subtype: 'success', is_error: true, result: 'No conversation found with session ID: abc' }));
    other.end();
    expect(other.finalReply()).toEqual({ ok: false, reason: 'the agent ended with an error (success): No conversation found with session ID: abc' });
  });

  it('given a last line without a newline, then it is read at the end', () => {
    const reader = claudeStreamJsonReader();
    reader.push(json({ type: 'result', subtype: 'success', result: 'done', session_id: 's' }).trimEnd());
    expect(reader.sessionId()).toBeNull();
    reader.end();
    expect(reader.sessionId()).toBe('s');
    expect(reader.finalReply()).toEqual({ ok: true, text: 'done', truncated: false });
  });

  it('given partial-message deltas, then the salvage tail follows them as they stream, without repeating the finished message', () => {
    const reader = claudeStreamJsonReader();
    const delta = (text: string) => json({ type: 'stream_event', event: { type: 'content_block_delta', delta: { type: 'text_delta', text } } });
    reader.push(delta('The cause '));
    reader.push(delta('is the cache'));
    expect(reader.unfinishedTail()).toBe('The cause is the cache');
    reader.push(json({ type: 'assistant', message: { content: [{ type: 'text', text: 'The cause is the cache' }] } }));
    reader.push(delta('Next'));
    expect(reader.unfinishedTail()).toBe('The cause is the cache\nNext');
  });

  it('given a result over 1 MiB, then the reply is cut to 1 MiB and says so', () => {
    const reader = claudeStreamJsonReader();
    const long = 'é'.repeat(REPLY_CAP_BYTES); // 2 MiB of UTF-8
    feedInPieces(reader, json({ type: 'result', subtype: 'success', result: long }), 65_536);
    const reply = reader.finalReply();
    expect(reply.ok).toBe(true);
    if (!reply.ok) return;
    expect(reply.truncated).toBe(true);
    expect(Buffer.byteLength(reply.text)).toBeLessThanOrEqual(REPLY_CAP_BYTES);
    expect(reply.text).toContain(`[reply cut at 1 MiB: the agent wrote ${2 * REPLY_CAP_BYTES} bytes]`);
    expect(reply.text).not.toContain('\uFFFD');
  });

  it('given a line longer than the line limit, then it is skipped (memory stays bounded) and the next lines still count', () => {
    const reader = claudeStreamJsonReader({ maxLineChars: 1_000 });
    reader.push('{"type":"assistant","message":{"content":[{"type":"text","text":"');
    for (let i = 0; i < 100; i++) reader.push('h'.repeat(100));
    reader.push('"}]}}\n');
    reader.push(json({ type: 'result', subtype: 'success', result: 'fine' }));
    reader.end();
    expect(reader.finalReply()).toEqual({ ok: true, text: 'fine', truncated: false });
    expect(reader.unfinishedTail()).toBe('');
  });
});

describe('codexJsonReader: Codex exec --json', () => {
  const codexRun = [
    json({ type: 'thread.started', thread_id: '0199a213-81c0-7800-8aa1-bbab2a035a53' }),
    json({ type: 'turn.started' }),
    json({ type: 'item.completed', item: { id: 'item_0', type: 'reasoning', text: '**Thinking**' } }),
    json({ type: 'item.completed', item: { id: 'item_1', type: 'command_execution', command: 'ls', aggregated_output: 'a\n' } }),
    json({ type: 'item.completed', item: { id: 'item_2', type: 'agent_message', text: 'First look: two files.' } }),
    json({ type: 'item.completed', item: { id: 'item_3', type: 'agent_message', text: 'Final answer: there are two files.' } }),
    json({ type: 'turn.completed', usage: { input_tokens: 10, output_tokens: 5 } }),
  ].join('');

  it.each([1, 3, 33, 10_000])('given the events in pieces of %i bytes, then the last agent message is the reply', (size) => {
    const reader = codexJsonReader();
    const heard = sessionsHeard(reader);
    feedInPieces(reader, codexRun, size);
    expect(heard).toEqual(['0199a213-81c0-7800-8aa1-bbab2a035a53']);
    expect(reader.finalReply()).toEqual({ ok: true, text: 'Final answer: there are two files.', truncated: false });
    expect(reader.unfinishedTail()).toBe('First look: two files.\nFinal answer: there are two files.');
  });

  it('given a failed turn, then there is no reply, and the reason carries the error', () => {
    const reader = codexJsonReader();
    feedInPieces(
      reader,
      json({ type: 'thread.started', thread_id: 't1' }) + json({ type: 'turn.failed', error: { message: 'model overloaded' } }),
      9,
    );
    expect(reader.sessionId()).toBe('t1');
    expect(reader.finalReply()).toEqual({ ok: false, reason: "the agent's turn failed: model overloaded" });
  });

  it('given an error event and no answer, then the error is the reason; given nothing at all, then it says no answer came', () => {
    const erred = codexJsonReader();
    feedInPieces(erred, `not json\n${json({ type: 'error', message: 'unauthorized' })}`, 4);
    expect(erred.finalReply()).toEqual({ ok: false, reason: 'the agent reported an error: unauthorized' });
    const silent = codexJsonReader();
    feedInPieces(silent, 'Error: unknown flag --jsn\n', 4);
    expect(silent.finalReply()).toEqual({ ok: false, reason: 'the agent wrote no answer message; it printed: Error: unknown flag --jsn' });
  });

  it('given an answer over the cap, then it is cut and says so', () => {
    const reader = codexJsonReader({ replyCapBytes: 200 });
    feedInPieces(reader, json({ type: 'item.completed', item: { type: 'agent_message', text: 'w'.repeat(1_000) } }), 100);
    const reply = reader.finalReply();
    expect(reply.ok && reply.truncated).toBe(true);
    expect(reply.ok && Buffer.byteLength(reply.text)).toBeLessThanOrEqual(200);
  });
});

describe('readerFor and capReply', () => {
  it('gives the reader for each kind', () => {
    expect(readerFor('plain').kind).toBe('plain');
    expect(readerFor('claude').kind).toBe('claude');
    expect(readerFor('codex').kind).toBe('codex');
  });

  it('leaves a reply within the cap alone and cuts a longer one at a character boundary', () => {
    expect(capReply('short', 100)).toEqual({ text: 'short', truncated: false });
    const cut = capReply('€'.repeat(100), 120);
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(120);
    expect(cut.text).toMatch(/^€+\n\n\[reply cut at 120 bytes: the agent wrote 300 bytes\]$/);
  });
});

/**
 * Terminal events as the CLIs print them. Claude Code's `result` (Agent SDK `SDKResultMessage`:
 * subtype success | error_max_turns | error_during_execution, is_error, result, errors,
 * total_cost_usd, usage), including the refused resume of anthropics/claude-code#19912; Codex's
 * exec events (codex-rs/exec/src/exec_events.rs: turn.completed.usage, turn.failed.error.message,
 * a fatal `error` {message}).
 */
describe("the turn's outcome and usage, from the agent's own terminal event (docs/rules.md#computer-behaviour)", () => {
  const claudeInit = json({ type: 'system', subtype: 'init', session_id: 'c-1', model: 'claude-sonnet-4-5', tools: ['Bash'] });
  const claudeResult = (over: Record<string, unknown>) =>
    json({
      type: 'result',
      subtype: 'success',
      is_error: false,
      duration_ms: 2_345,
      num_turns: 1,
      result: 'The answer.',
      session_id: 'c-1',
      total_cost_usd: 0.0123,
      usage: { input_tokens: 12, cache_creation_input_tokens: 100, cache_read_input_tokens: 3_000, output_tokens: 45 },
      ...over,
    });

  it('given a Claude success, then the reply is the result, no agent error, and its cost and tokens are read', () => {
    const reader = claudeStreamJsonReader();
    feedInPieces(reader, claudeInit + claudeResult({}), 7);
    expect(reader.finalReply()).toEqual({ ok: true, text: 'The answer.', truncated: false });
    expect(reader.agentError()).toBeNull();
    expect(reader.usage()).toEqual({ costUsd: 0.0123, inputTokens: 12, outputTokens: 45, cachedInputTokens: 3_000 });
  });

  it.each([
    ['error_max_turns', { subtype: 'error_max_turns', is_error: true, result: undefined }, 'error_max_turns'],
    [
      'error_during_execution with errors[]',
      { subtype: 'error_during_execution', is_error: true, result: undefined, errors: ['No conversation found with session ID: d5'] },
      'error_during_execution: No conversation found with session ID: d5',
    ],
    ['is_error on a success subtype', { is_error: true, result: 'Credit balance is too low' }, 'success: Credit balance is too low'],
  ])("given a Claude %s, then the turn failed, in the agent's words", (_, over, said) => {
    const reader = claudeStreamJsonReader();
    feedInPieces(reader, claudeInit + claudeResult(over), 11);
    expect(reader.agentError()).toBe(said);
    const [subtype, ...words] = said.split(': ');
    expect(reader.finalReply()).toEqual({
      ok: false,
      reason: `the agent ended with an error (${subtype})${words.length ? `: ${words.join(': ')}` : ''}`,
    });
  });

  const codexStart = json({ type: 'thread.started', thread_id: 't-1' }) + json({ type: 'turn.started' });
  const codexMessage = json({ type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: 'Done.' } });

  it('given a Codex turn.completed, then the reply is the last message and its tokens are read', () => {
    const reader = codexJsonReader();
    feedInPieces(
      reader,
      codexStart + codexMessage + json({ type: 'turn.completed', usage: { input_tokens: 1200, cached_input_tokens: 200, output_tokens: 345 } }),
      5,
    );
    expect(reader.finalReply()).toEqual({ ok: true, text: 'Done.', truncated: false });
    expect(reader.agentError()).toBeNull();
    expect(reader.usage()).toEqual({ inputTokens: 1200, cachedInputTokens: 200, outputTokens: 345 });
  });

  it('given a Codex turn.failed after a message, then the turn failed with its error message', () => {
    const reader = codexJsonReader();
    feedInPieces(reader, codexStart + codexMessage + json({ type: 'turn.failed', error: { message: 'stream disconnected before completion' } }), 5);
    expect(reader.agentError()).toBe('stream disconnected before completion');
    expect(reader.finalReply()).toEqual({ ok: false, reason: "the agent's turn failed: stream disconnected before completion" });
  });

  it('given a final Codex error after a message, then the turn failed; an error a completed turn follows did not', () => {
    const fatal = codexJsonReader();
    feedInPieces(fatal, codexStart + codexMessage + json({ type: 'error', message: 'unexpected status 401 Unauthorized' }), 5);
    expect(fatal.agentError()).toBe('unexpected status 401 Unauthorized');
    expect(fatal.finalReply().ok).toBe(false);
    const recovered = codexJsonReader();
    feedInPieces(
      recovered,
      codexStart + json({ type: 'error', message: 'Reconnecting... 1/5' }) + codexMessage + json({ type: 'turn.completed', usage: {} }),
      5,
    );
    expect(recovered.agentError()).toBeNull();
    expect(recovered.finalReply()).toEqual({ ok: true, text: 'Done.', truncated: false });
  });
});
