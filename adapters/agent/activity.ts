import { asObject, type Json } from './jsonLines.ts';

/**
 * What an agent is doing, in one short line, from its own stream (docs/rules.md#wire-and-cli heartbeat `progress`): its
 * latest tool call or message. Claude Code's `assistant` messages carry `tool_use` blocks (`name`,
 * `input`) and `text`; Codex's `item.started` / `item.completed` carry `command_execution`
 * (`command`, `exit_code`), `file_change`, `mcp_tool_call`, `web_search` and `agent_message` items.
 * The line is bounded and what looks like a secret in it is masked: it is shown on the board's page
 * and by `runledger show --follow`, and is never written to the log.
 */

/** A progress line is cut to this many characters. */
export const PROGRESS_CHARS = 200;

/** The line for one Claude `assistant` event: its last tool call, else its last text; null when it has neither. */
export function claudeActivity(event: Json): string | null {
  const content = asObject(event.message)?.content;
  if (!Array.isArray(content)) return null;
  for (let i = content.length - 1; i >= 0; i--) {
    const block = asObject(content[i]);
    if (block?.type === 'tool_use' && typeof block.name === 'string') return progressLine(toolCall(block.name, asObject(block.input)));
    if (block?.type === 'text' && typeof block.text === 'string' && block.text.trim()) return progressLine(`says: ${block.text}`);
  }
  return null;
}

/** The line for one Codex `item.started` / `item.completed` event; null for items that say nothing of its work. */
export function codexActivity(event: Json): string | null {
  const item = asObject(event.item);
  if (!item) return null;
  const started = event.type === 'item.started';
  switch (item.type ?? item.item_type) {
    case 'command_execution': {
      const command = typeof item.command === 'string' ? item.command : '?';
      if (started) return progressLine(`running: ${command}`);
      return progressLine(`ran: ${command}${typeof item.exit_code === 'number' ? ` (exit ${item.exit_code})` : ''}`);
    }
    case 'file_change': {
      const paths = Array.isArray(item.changes) ? item.changes.map((c) => asObject(c)?.path).filter((p) => typeof p === 'string') : [];
      return progressLine(`${started ? 'editing' : 'edited'}: ${paths.join(', ') || 'files'}`);
    }
    case 'mcp_tool_call':
      return progressLine(`tool: ${[item.server, item.tool].filter((p) => typeof p === 'string').join('.')}`);
    case 'web_search':
      return progressLine(`searching the web: ${typeof item.query === 'string' ? item.query : ''}`);
    case 'agent_message':
    case 'assistant_message':
      return typeof item.text === 'string' && item.text.trim() ? progressLine(`says: ${item.text}`) : null;
    default:
      return null;
  }
}

/** `Bash: npm test`, `Edit: src/a.ts`: a tool's name and the one argument that says what it does. */
function toolCall(name: string, input: Json | undefined): string {
  const said = ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description', 'prompt']
    .map((key) => input?.[key])
    .find((value): value is string => typeof value === 'string' && value.trim() !== '');
  return said ? `${name}: ${said}` : name;
}

/**
 * Values that look like credentials, masked: a bearer or basic token, a value after a name that says
 * secret (`KEY=value`, `"password": "…"`, `--api-key value`, `aws_secret_access_key value`), the
 * prefixes API keys are known by (sk-, sk_live_, ghp_, xox…, AKIA…, AIza…, npm_, dckr_pat_, hf_), a
 * JWT, and the password of a URL or of `-u user:password`.
 */
const MARK = '\u0000';
const SECRET_WORD = /token|secret|password|passwd|api[_-]?key|access[_-]?key|private[_-]?key|credential/i;
/** A value after a name, marked to be masked when the name says secret; the line as it was otherwise. */
const afterSecretName = (match: string, name: string, separator: string) => (SECRET_WORD.test(name) ? `${name}${separator}${MARK}` : match);
// A whole name only (nothing of a name before it or after it): each name is tried once, so a long line costs linear time.
const NAME = '(?<![A-Za-z0-9_-])([A-Za-z0-9_-]+)(?![A-Za-z0-9_-])';
const SECRETS: readonly [RegExp, string | ((match: string, ...groups: string[]) => string)][] = [
  [/\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 ***'],
  // A name that says secret, then `=` or `:` (a quote of JSON between), then any value. The value is
  // looked ahead at, not taken: it may hold the next name (`Bash: API_TOKEN=…`), tried in its turn.
  [new RegExp(String.raw`${NAME}(["']?\s*[:=]\s*)(?=["']|[^\s"',;])`, 'g'), afterSecretName],
  // The same name then a space: only a value that looks like a key (long, no words) is taken for one.
  // The value is looked ahead at, not taken (it may be the next name): marked (control characters are
  // gone by now), then masked.
  [
    new RegExp(String.raw`${NAME}(\s+)(?=[A-Za-z0-9._~+/=-]{16,})`, 'g'),
    (match, name, space) => (SECRET_WORD.test(name!) ? `${name}${space}${MARK}` : match),
  ],
  // What a rule above marked as a value: a quoted one whole, else up to a space, quote or separator.
  [new RegExp(`${MARK}(?:"[^"]*"|'[^']*'|[^\\s"',;]+)`, 'g'), '***'],
  [/\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{12,}/g, '***'],
  [/\b(?:ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[abprs]|npm|dckr_pat|hf)[-_][A-Za-z0-9_-]{10,}/g, '***'],
  [/\bAKIA[0-9A-Z]{16}\b/g, '***'],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, '***'],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, '***'],
  [/(\/\/[^/\s:@]+:)[^@\s/]+@/g, '$1***@'],
  [/((?:^|\s)(?:-u|--user)[\s=]+[^\s:]+:)\S+/g, '$1***'],
];

/** One line, secrets masked, control characters gone, at most PROGRESS_CHARS. */
export function progressLine(text: string): string {
  // Cut well past the bound first (a command can be megabytes); what a cut splits is cut again below.
  let line = text
    .slice(0, PROGRESS_CHARS * 10)
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  for (const [pattern, mask] of SECRETS) line = line.replace(pattern, mask as (match: string, ...groups: string[]) => string);
  return line.length > PROGRESS_CHARS ? `${line.slice(0, PROGRESS_CHARS - 1)}…` : line;
}
