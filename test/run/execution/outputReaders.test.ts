import { describe, expect, it } from 'vitest';
import {
  capReply,
  claudeStreamJsonReader,
  codexJsonReader,
  type OutputReader,
  plainReader,
  REPLY_CAP_BYTES,
  readerFor,
} from '../../../actors/run/outputReaders.ts';

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
