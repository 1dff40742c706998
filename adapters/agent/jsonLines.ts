import { StringDecoder } from 'node:string_decoder';

/**
 * Agents that speak JSON lines (Claude Code's stream-json, Codex's --json): stdout cut into lines
 * wherever the chunks fall, each line parsed on its own, and whatever is not a JSON object skipped.
 */

/** Splits decoded stdout into lines, holding at most `maxChars` of an unfinished one. */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pieces: string[] = [];
  private chars = 0;
  private overlong = false;

  constructor(
    private readonly maxChars: number,
    private readonly onLine: (line: string) => void,
    private readonly onOverlong: () => void,
  ) {}

  push(chunk: Uint8Array | string): void {
    this.feed(typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
  }

  end(): void {
    this.feed(this.decoder.end());
    this.finishLine();
  }

  private feed(text: string): void {
    let from = 0;
    for (;;) {
      const newline = text.indexOf('\n', from);
      if (newline === -1) {
        this.keep(text.slice(from));
        return;
      }
      this.keep(text.slice(from, newline));
      this.finishLine();
      from = newline + 1;
    }
  }

  private keep(part: string): void {
    if (this.overlong || part.length === 0) return;
    if (this.chars + part.length > this.maxChars) {
      this.overlong = true;
      this.pieces = [];
      this.chars = 0;
      this.onOverlong();
      return;
    }
    this.pieces.push(part);
    this.chars += part.length;
  }

  private finishLine(): void {
    const line = this.pieces.join('');
    const skipped = this.overlong;
    this.pieces = [];
    this.chars = 0;
    this.overlong = false;
    if (!skipped && line.trim()) this.onLine(line);
  }
}

export type Json = Record<string, unknown>;

/**
 * The common part of the JSON-lines readers: malformed lines are skipped (never fatal), and the
 * first few hundred characters of what was not JSON are kept, because an agent that printed a login
 * prompt or a crash banner instead of events is best explained by its own words.
 */
export function jsonLines(maxLineChars: number, onObject: (event: Json) => void) {
  let unparsed = '';
  let overlong = 0;
  const splitter = new LineSplitter(
    maxLineChars,
    (line) => {
      const event = parseObject(line);
      if (event) onObject(event);
      else if (unparsed.length < 500) unparsed = `${unparsed}${unparsed ? '\n' : ''}${line.trim()}`.slice(0, 500);
    },
    () => overlong++,
  );
  return {
    push: (chunk: Uint8Array | string) => splitter.push(chunk),
    end: () => splitter.end(),
    /** Why there is no reply, in words, with what the agent said instead when it said something. */
    explain(missing: string): string {
      const parts = [missing];
      if (overlong > 0) parts.push(`${overlong} line(s) over ${maxLineChars} characters were skipped`);
      if (unparsed) parts.push(`it printed: ${unparsed}`);
      return parts.join('; ');
    },
  };
}

export function parseObject(line: string): Json | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(trimmed);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
  } catch (error) {
    // A line of the agent's that is not JSON (a stray print) is none of its events.
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}

export function asObject(value: unknown): Json | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}
