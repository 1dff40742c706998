import { isUsableSessionId } from '../../actors/run/resume.ts';
import { decodeWhole, TailBuffer, utf8Boundary } from '../../actors/run/tailBuffer.ts';
import { believableReset, type UsageLimit, usageLimitIn } from '../../actors/run/usageLimit.ts';
import { claudeActivity, codexActivity } from './activity.ts';
import { asObject, jsonLines } from './jsonLines.ts';

/**
 * Readers of an agent's stdout, fed chunk by chunk as the process prints (docs/rules.md#computer-behaviour,
 * "Execution"). Each one tells, at any moment: the session id the agent announced, the reply so far,
 * and the tail of the answer it was writing (salvaged when the run is stopped); and at the end, the
 * final reply. Nothing here keeps the whole stdout: the reply is capped, the tail is bounded, and a
 * JSON line is held only up to `maxLineChars`.
 */

export type AgentKind = 'plain' | 'claude' | 'codex';

/** The reply is the agent's answer up to 1 MiB; a longer one is cut, and says so. */
export const REPLY_CAP_BYTES = 1024 * 1024;
/** How much of an unfinished answer is kept for salvage. */
export const SALVAGE_TAIL_BYTES = 4 * 1024;
/**
 * A JSON line longer than this is skipped: holding it whole is the only way to parse it, and an
 * agent that prints a line without end must not take the daemon's memory with it.
 */
export const MAX_LINE_CHARS = 8 * 1024 * 1024;

export type FinalReply = { readonly ok: true; readonly text: string; readonly truncated: boolean } | { readonly ok: false; readonly reason: string };

export interface OutputReader {
  readonly kind: AgentKind;
  /** Feeds the next chunk of stdout (chunks may split lines and characters anywhere). */
  push(chunk: Uint8Array | string): void;
  /** Stdout ended: a last line without a newline is read now. */
  end(): void;
  /**
   * Calls `listener` the moment the output announces a session id, once per distinct id; a listener
   * added after an id appeared hears the current one at once. Returns an unsubscribe function.
   */
  onSessionId(listener: (id: string) => void): () => void;
  sessionId(): string | null;
  replySoFar(): string;
  /** The reply, once stdout has ended (capped at the reply cap), or why there is none. */
  finalReply(): FinalReply;
  /** The last few KiB of the answer the agent was writing, for a run stopped before it finished. */
  unfinishedTail(): string;
  /**
   * The agent's own words when its terminal event says the turn failed (a Claude `result` with
   * `is_error` or an error subtype, a Codex `turn.failed` or a final `error`), whatever its exit code.
   */
  agentError(): string | null;
  /** Cost and tokens as the agent's terminal events report them, or null when they say nothing. */
  usage(): AgentUsage | null;
  /** What the agent is doing, in one short line (its latest tool call or message), or null (see activity.ts). */
  progress(): string | null;
  /** Calls `listener` each time that line changes. Returns an unsubscribe function. */
  onProgress(listener: (line: string) => void): () => void;
  /**
   * The login's usage or rate limit, when the turn did not succeed because of it (see usageLimit.ts):
   * read from the agent's failure verdict, else from its stderr. Plain commands say none.
   */
  usageLimit(context: LimitContext): UsageLimit | null;
}

/** What reading a limit's reset time needs: the time, the machine's zone, and what the agent wrote on stderr. */
export interface LimitContext {
  readonly now: number;
  /** The machine's zone, asked for only when the words give a wall-clock time (see usageLimit.ts). */
  readonly timeZone: () => string;
  readonly stderr: string;
}

/** What a turn cost, as the agent reports it (Claude: `total_cost_usd`, `usage`; Codex: `turn.completed.usage`). */
export interface AgentUsage {
  readonly costUsd?: number;
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly cachedInputTokens?: number;
}

/** The agent's words are kept to this many characters in an error. */
const AGENT_WORDS_CHARS = 1_000;

export interface ReaderOptions {
  readonly replyCapBytes?: number;
  readonly tailBytes?: number;
  readonly maxLineChars?: number;
}

export function readerFor(kind: AgentKind, options: ReaderOptions = {}): OutputReader {
  switch (kind) {
    case 'plain':
      return plainReader(options);
    case 'claude':
      return claudeStreamJsonReader(options);
    case 'codex':
      return codexJsonReader(options);
    default: {
      const unknown: never = kind;
      throw new Error(`no output reader for agent kind ${String(unknown)}`);
    }
  }
}

/** `text` cut to `capBytes` of UTF-8, with a note saying it was cut when it was. */
export function capReply(text: string, capBytes = REPLY_CAP_BYTES): { text: string; truncated: boolean } {
  const total = Buffer.byteLength(text, 'utf8');
  if (total <= capBytes) return { text, truncated: false };
  return { text: cutReply(Buffer.from(text, 'utf8'), total, capBytes), truncated: true };
}

/** A cut reply from the first bytes of it (`head` holds at least `capBytes`), ending with the note. */
function cutReply(head: Buffer, totalBytes: number, capBytes: number): string {
  const note = `\n\n[reply cut at ${sizeWords(capBytes)}: the agent wrote ${totalBytes} bytes]`;
  const room = Math.max(0, capBytes - Buffer.byteLength(note, 'utf8'));
  return head.subarray(0, utf8Boundary(head, room)).toString('utf8').trimEnd() + note;
}

function sizeWords(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** One id at a time, each distinct one told to every listener once. */
class SessionAnnouncer {
  private current: string | null = null;
  private listeners = new Set<(id: string) => void>();

  announce(id: unknown): void {
    if (!isUsableSessionId(id) || id === this.current) return;
    this.current = id;
    for (const listener of this.listeners) tell(listener, id);
  }

  on(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    if (this.current !== null) tell(listener, this.current);
    return () => this.listeners.delete(listener);
  }

  id(): string | null {
    return this.current;
  }
}

/**
 * A listener runs inside the stdout stream's handler; an exception there must not tear the stream
 * (and the daemon) down, so it becomes a process warning instead.
 */
function tell(listener: (value: string) => void, value: string): void {
  try {
    listener(value);
  } catch (error) {
    process.emitWarning(`an output listener threw: ${String(error)}`);
  }
}

/** The latest progress line, each change told to every listener. */
class ProgressAnnouncer {
  private current: string | null = null;
  private readonly listeners = new Set<(line: string) => void>();

  announce(line: string | null): void {
    if (line === null || line === '' || line === this.current) return;
    this.current = line;
    for (const listener of this.listeners) tell(listener, line);
  }

  on(listener: (line: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  line(): string | null {
    return this.current;
  }
}

/** A command that prints its answer and nothing else: the whole stdout is the reply. */
export function plainReader(options: ReaderOptions = {}): OutputReader {
  const cap = options.replyCapBytes ?? REPLY_CAP_BYTES;
  const head: Buffer[] = [];
  let headBytes = 0;
  let total = 0;
  const tail = new TailBuffer(options.tailBytes ?? SALVAGE_TAIL_BYTES);
  const session = new SessionAnnouncer();
  const headText = (): string => decodeWhole(Buffer.concat(head, headBytes));
  return {
    kind: 'plain',
    push(chunk) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      total += bytes.length;
      tail.push(bytes);
      // One byte past the cap is kept so the cut can tell a reply of exactly the cap from a longer one.
      const room = cap + 1 - headBytes;
      if (room > 0 && bytes.length > 0) {
        const piece = Buffer.from(bytes.subarray(0, room));
        head.push(piece);
        headBytes += piece.length;
      }
    },
    end() {
      // plain text keeps nothing back for the end
    },
    onSessionId: (listener) => session.on(listener),
    sessionId: () => session.id(),
    replySoFar: () => headText(),
    finalReply() {
      if (total > cap) return { ok: true, text: cutReply(Buffer.concat(head, headBytes), total, cap), truncated: true };
      const text = headText().trim();
      return text ? { ok: true, text, truncated: false } : { ok: false, reason: 'the agent printed nothing' };
    },
    unfinishedTail: () => tail.text().trim(),
    agentError: () => null,
    usage: () => null,
    usageLimit: () => null,
    // Plain text says nothing of what the command is doing: no progress, and no extra heartbeats.
    progress: () => null,
    onProgress: () => () => undefined,
  };
}

function textBlocks(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => asObject(block))
    .filter((block) => block?.type === 'text' && typeof block.text === 'string')
    .map((block) => block!.text as string)
    .join('');
}

/**
 * Claude Code with `--output-format stream-json` (which needs `--verbose` with `-p`): the `system`
 * `init` event carries the session id (every later event repeats it), `assistant` events carry the
 * text written so far, and the `result` event carries the final answer or the error. With
 * `--include-partial-messages`, text deltas feed the salvage tail as they stream.
 */
export function claudeStreamJsonReader(options: ReaderOptions = {}): OutputReader {
  const cap = options.replyCapBytes ?? REPLY_CAP_BYTES;
  const session = new SessionAnnouncer();
  const tail = new TailBuffer(options.tailBytes ?? SALVAGE_TAIL_BYTES);
  let lastText = '';
  let streamedDeltas = false;
  let result: { subtype: string; isError: boolean; text: string; errors: string } | null = null;
  let usage: AgentUsage | null = null;
  // Claude Code 2.1's `rate_limit_event`: `status: "rejected"` says the login is at its limit, `resetsAt` (s) when it lifts.
  let rejectedUntil: number | null | undefined;
  const progress = new ProgressAnnouncer();
  const lines = jsonLines(options.maxLineChars ?? MAX_LINE_CHARS, (event) => {
    session.announce(event.session_id);
    switch (event.type) {
      case 'rate_limit_event': {
        const info = asObject(event.rate_limit_info);
        if (info?.status === 'rejected') rejectedUntil = typeof info.resetsAt === 'number' ? info.resetsAt * 1000 : null;
        return;
      }
      case 'assistant': {
        progress.announce(claudeActivity(event));
        const text = textBlocks(asObject(event.message)?.content);
        if (!text) return;
        lastText = capReply(text, cap).text;
        // Deltas already put this text in the tail; the finished message would repeat it.
        if (!streamedDeltas) tail.push(tail.bytesSeen() > 0 ? `\n${text}` : text);
        streamedDeltas = false;
        return;
      }
      case 'stream_event': {
        const delta = asObject(asObject(event.event)?.delta);
        if (delta?.type === 'text_delta' && typeof delta.text === 'string') {
          if (!streamedDeltas && tail.bytesSeen() > 0) tail.push('\n');
          streamedDeltas = true;
          tail.push(delta.text);
        }
        return;
      }
      case 'result': {
        result = {
          subtype: typeof event.subtype === 'string' ? event.subtype : 'unknown',
          isError: event.is_error === true,
          text: typeof event.result === 'string' ? event.result : '',
          // `errors` (strings) is where a refused resume says "No conversation found with session ID".
          errors: Array.isArray(event.errors) ? event.errors.filter((said): said is string => typeof said === 'string').join('; ') : '',
        };
        const tokens = asObject(event.usage);
        usage = usageOf({
          costUsd: event.total_cost_usd,
          inputTokens: tokens?.input_tokens,
          outputTokens: tokens?.output_tokens,
          cachedInputTokens: tokens?.cache_read_input_tokens,
        });
        return;
      }
    }
  });
  const failed = (): { subtype: string; said: string } | null => {
    if (!result || (!result.isError && result.subtype === 'success')) return null;
    return { subtype: result.subtype, said: [result.errors, result.text.trim()].filter(Boolean).join('; ').slice(0, AGENT_WORDS_CHARS) };
  };
  const agentError = (): string | null => {
    const failure = failed();
    return failure && `${failure.subtype}${failure.said ? `: ${failure.said}` : ''}`;
  };
  return {
    kind: 'claude',
    push: lines.push,
    end: lines.end,
    onSessionId: (listener) => session.on(listener),
    sessionId: () => session.id(),
    replySoFar: () => (result && !result.isError ? capReply(result.text, cap).text : lastText),
    agentError,
    usage: () => usage,
    usageLimit({ now, timeZone, stderr }) {
      // Only a turn that did not succeed: an answer that talks about limits is an answer.
      if (result !== null && failed() === null) return null;
      const said = [...new Set([result?.errors, result?.text, lastText, stderr])].filter(Boolean).join('\n');
      const found = usageLimitIn(said, now, timeZone);
      if (rejectedUntil === undefined) return found;
      const resetAt = rejectedUntil === null ? null : believableReset(rejectedUntil, now);
      const words = found?.words ?? 'the login is at its usage limit (rate_limit_event: rejected)';
      return resetAt === null ? (found ?? { words }) : { words, resetAt };
    },
    progress: () => progress.line(),
    onProgress: (listener) => progress.on(listener),
    finalReply() {
      if (!result) return { ok: false, reason: lines.explain('the agent wrote no result event') };
      const failure = failed();
      if (failure !== null)
        return { ok: false, reason: `the agent ended with an error (${failure.subtype})${failure.said ? `: ${failure.said}` : ''}` };
      const text = result.text.trim();
      if (!text) return { ok: false, reason: 'the agent finished with an empty reply' };
      const capped = capReply(text, cap);
      return { ok: true, text: capped.text, truncated: capped.truncated };
    },
    unfinishedTail: () => tail.text().trim(),
  };
}

/**
 * Codex with `exec --json`: `thread.started` carries the session (thread) id, each completed
 * `agent_message` item carries an answer (the last one is the reply), and the turn ends with
 * `turn.completed` or `turn.failed`.
 */
export function codexJsonReader(options: ReaderOptions = {}): OutputReader {
  const cap = options.replyCapBytes ?? REPLY_CAP_BYTES;
  const session = new SessionAnnouncer();
  const tail = new TailBuffer(options.tailBytes ?? SALVAGE_TAIL_BYTES);
  let lastMessage = { text: '', truncated: false };
  let failure: string | null = null;
  // An `error` counts when no completed turn follows it: a stream that reconnected is not a failure.
  let lastError: string | null = null;
  let usage: AgentUsage | null = null;
  const progress = new ProgressAnnouncer();
  const lines = jsonLines(options.maxLineChars ?? MAX_LINE_CHARS, (event) => {
    if (event.type === 'item.started' || event.type === 'item.completed') progress.announce(codexActivity(event));
    switch (event.type) {
      case 'turn.completed': {
        lastError = null;
        const tokens = asObject(event.usage);
        const turn = usageOf({
          inputTokens: tokens?.input_tokens,
          outputTokens: tokens?.output_tokens,
          cachedInputTokens: tokens?.cached_input_tokens,
        });
        usage = turn === null ? usage : addUsage(usage, turn);
        return;
      }
      case 'thread.started':
        session.announce(event.thread_id);
        return;
      case 'item.completed': {
        const item = asObject(event.item);
        const itemType = item?.type ?? item?.item_type;
        if ((itemType === 'agent_message' || itemType === 'assistant_message') && typeof item?.text === 'string' && item.text) {
          lastMessage = capReply(item.text.trim(), cap);
          tail.push(tail.bytesSeen() > 0 ? `\n${item.text}` : item.text);
        }
        return;
      }
      case 'turn.failed':
        failure = messageOf(event.error) ?? 'the turn failed';
        return;
      case 'error':
        lastError = messageOf(event) ?? 'an error';
        return;
    }
  });
  return {
    kind: 'codex',
    push: lines.push,
    end: lines.end,
    onSessionId: (listener) => session.on(listener),
    sessionId: () => session.id(),
    replySoFar: () => lastMessage.text,
    agentError: () => (failure ?? lastError)?.slice(0, AGENT_WORDS_CHARS) ?? null,
    usage: () => usage,
    usageLimit({ now, timeZone, stderr }) {
      if (failure === null && lastError === null && lastMessage.text) return null;
      return usageLimitIn([failure, lastError, stderr].filter(Boolean).join('\n'), now, timeZone);
    },
    progress: () => progress.line(),
    onProgress: (listener) => progress.on(listener),
    finalReply() {
      if (failure !== null) return { ok: false, reason: `the agent's turn failed: ${failure.slice(0, AGENT_WORDS_CHARS)}` };
      if (lastError !== null) return { ok: false, reason: `the agent reported an error: ${lastError.slice(0, AGENT_WORDS_CHARS)}` };
      if (lastMessage.text) return { ok: true, ...lastMessage };
      return { ok: false, reason: lines.explain('the agent wrote no answer message') };
    },
    unfinishedTail: () => tail.text().trim(),
  };
}

function messageOf(value: unknown): string | undefined {
  const message = asObject(value)?.message;
  return typeof message === 'string' ? message : undefined;
}

/** Only finite, non-negative numbers are usage; null when none of them is. */
function usageOf(fields: Partial<Record<keyof AgentUsage, unknown>>): AgentUsage | null {
  const kept = Object.entries(fields).filter(([, value]) => typeof value === 'number' && Number.isFinite(value) && value >= 0);
  return kept.length === 0 ? null : (Object.fromEntries(kept) as AgentUsage);
}

function addUsage(a: AgentUsage | null, b: AgentUsage): AgentUsage {
  if (a === null) return b;
  const sum = (x?: number, y?: number) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  return usageOf({
    costUsd: sum(a.costUsd, b.costUsd),
    inputTokens: sum(a.inputTokens, b.inputTokens),
    outputTokens: sum(a.outputTokens, b.outputTokens),
    cachedInputTokens: sum(a.cachedInputTokens, b.cachedInputTokens),
  })!;
}
