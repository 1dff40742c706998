/**
 * The words of a shell command line, with where each one sits in it, so that arguments can be put
 * into a user's `--exec` line (docs/rules.md#computer-behaviour, "Execution") without rewriting what they typed: their
 * quoting, variables and redirections stay exactly as written. Only the first simple command is
 * read (up to the first unquoted operator); its words are what the agent's program gets. Pure.
 */

export interface Word {
  /** The word as the program receives it, quotes removed (variables are left as written). */
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

export interface SimpleCommand {
  /** The command's words; leading `NAME=value` assignments are not among them. */
  readonly words: readonly Word[];
  /** Where the simple command ends in the line (its last word's end, or the line's start). */
  readonly end: number;
}

const OPERATOR = new Set(['|', '&', ';', '<', '>', '(', ')', '`', '\n']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

export function simpleCommand(line: string): SimpleCommand {
  const words: Word[] = [];
  let i = 0;
  for (;;) {
    while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++;
    if (i >= line.length || OPERATOR.has(line[i]!)) break;
    const start = i;
    let text = '';
    let quoted = false;
    while (i < line.length && line[i] !== ' ' && line[i] !== '\t' && !OPERATOR.has(line[i]!)) {
      const c = line[i]!;
      if (c === "'") {
        const close = line.indexOf("'", i + 1);
        const stop = close === -1 ? line.length : close;
        text += line.slice(i + 1, stop);
        i = stop + 1;
        quoted = true;
      } else if (c === '"') {
        i++;
        while (i < line.length && line[i] !== '"') {
          if (line[i] === '\\' && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1]!)) i++;
          text += line[i];
          i++;
        }
        i++;
        quoted = true;
      } else if (c === '\\' && i + 1 < line.length) {
        text += line[i + 1];
        i += 2;
      } else {
        text += c;
        i++;
      }
    }
    const end = Math.min(i, line.length);
    // `2>log`: the digits belong to the redirection, not to the command.
    if (!quoted && /^\d+$/.test(text) && (line[end] === '<' || line[end] === '>')) break;
    // Assignments before the program set its environment; they are not its words.
    if (!(words.length === 0 && !quoted && ASSIGNMENT.test(text))) words.push({ text, start, end });
  }
  return { words, end: words.at(-1)?.end ?? 0 };
}

/** The program's own name: the first word without its folder (`/usr/local/bin/claude` is `claude`). */
export function programName(command: SimpleCommand): string {
  return command.words[0]?.text.split('/').pop() ?? '';
}

/** `line` with each text put at its offset (offsets in the original line; several may share one). */
export function insertAt(line: string, inserts: readonly { readonly at: number; readonly text: string }[]): string {
  // From the end backwards, so earlier offsets stay true; texts sharing an offset keep their order.
  const sorted = inserts.map((insert, index) => ({ ...insert, index })).sort((a, b) => b.at - a.at || b.index - a.index);
  let out = line;
  for (const { at, text } of sorted) out = `${out.slice(0, at)}${text}${out.slice(at)}`;
  return out;
}
