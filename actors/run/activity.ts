import { asObject, type Json } from './jsonLines.ts';

/**
 * What an agent is doing, in one short line, from its own stream (SPEC 7 heartbeat `progress`): its
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
 * Values that look like credentials, masked: a bearer or basic token, `KEY=value` where the name says
 * secret, and the prefixes API keys are known by (sk-, ghp_, xox…, AKIA…).
 */
const SECRETS: readonly [RegExp, string][] = [
  [/\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 ***'],
  [/\b([A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)[A-Z0-9_]*)=("[^"]*"|'[^']*'|\S+)/gi, '$1=***'],
  [/\b(?:sk|pk|rk)-[A-Za-z0-9_-]{12,}/g, '***'],
  [/\b(?:ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[abprs])[-_][A-Za-z0-9_-]{10,}/g, '***'],
  [/\bAKIA[0-9A-Z]{16}\b/g, '***'],
  [/(\/\/[^/\s:@]+:)[^@\s/]+@/g, '$1***@'],
];

/** One line, secrets masked, control characters gone, at most PROGRESS_CHARS. */
export function progressLine(text: string): string {
  // Cut well past the bound first (a command can be megabytes); what a cut splits is cut again below.
  let line = text
    .slice(0, PROGRESS_CHARS * 10)
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  for (const [pattern, mask] of SECRETS) line = line.replace(pattern, mask);
  return line.length > PROGRESS_CHARS ? `${line.slice(0, PROGRESS_CHARS - 1)}…` : line;
}
