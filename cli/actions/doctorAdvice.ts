import type { AgentKind } from '../../adapters/agent/outputReaders.ts';

/**
 * What `runledger doctor` says about an agent that gave no usable answer, and what to do about it,
 * read from the agent's own words (its stderr, its terminal event, what it printed instead of events).
 * The patterns are the real CLIs' messages: Claude Code's print mode ("When using --print,
 * --output-format=stream-json requires --verbose"), its logins ("Not logged in · Please run /login",
 * "Invalid API key · Please run /login", `authentication_failed`), Codex's 401 without a login
 * ("exceeded retry limit, last status: 401 Unauthorized") and its git check ("Not inside a trusted
 * directory and --skip-git-repo-check was not specified"), and the terminal UIs that need a terminal
 * (Ink's "Raw mode is not supported", "stdin is not a terminal").
 */

export interface Finding {
  readonly detail: string;
  readonly fix?: string;
}

/** What a turn left to read its trouble from. */
export interface TurnTrouble {
  readonly outcome: 'exited' | 'timed_out' | 'cancelled' | 'killed' | 'failed_to_start';
  readonly exitCode: number | null;
  /** The turn's error, as `runledger run` would say it. */
  readonly error: string;
  /** Everything the agent said: stderr tail, its terminal event's words, why its output gave no reply. */
  readonly said: string;
  /** The budget it had, in seconds (0 = none). */
  readonly budgetS: number;
}

export const KIND_WORDS: Record<AgentKind, string> = {
  claude: 'Claude Code, read as stream-json',
  codex: 'Codex, read as exec --json events',
  plain: 'a plain command: its whole stdout is the reply',
};

const LOGIN_HOW: Record<AgentKind, string> = {
  claude:
    'log Claude Code in as the user the daemon runs as: run `claude` in a terminal and type /login (or `claude setup-token` for a ' +
    'long-lived token in CLAUDE_CODE_OAUTH_TOKEN, or set ANTHROPIC_API_KEY); a CLAUDE_CONFIG_DIR in the command picks another login',
  codex:
    'log Codex in as the user the daemon runs as: `codex login` (or `codex login --with-api-key` with the key on stdin); ' +
    '`codex login status` says whether it is; a CODEX_HOME in the command picks another login',
  plain: "log the agent in as the user the daemon runs as: the command runs with the daemon's environment and HOME",
};

const RULES: readonly { readonly pattern: RegExp; readonly finding: (kind: AgentKind, words: string) => Finding }[] = [
  {
    pattern: /requires --verbose/i,
    finding: (_kind, words) => ({
      detail: `print mode refused stream-json without --verbose: ${words}`,
      fix:
        'add --verbose to the claude command line. runledger adds it itself when the program is named claude; a wrapper script ' +
        'that calls claude with --output-format stream-json must pass --verbose too',
    }),
  },
  {
    pattern: /raw mode is not supported|stdin is not a terminal|not a tty|is not a terminal/i,
    finding: (_kind, words) => ({
      detail: `the command started a terminal UI, which needs a terminal (the daemon gives the agent a pipe): ${words}`,
      fix:
        'run the agent headless: name the program claude or codex and runledger adds -p / exec itself, or pass its print mode ' +
        'yourself in a wrapper (claude -p --output-format stream-json --verbose, codex exec --json)',
    }),
  },
  {
    pattern: /not logged in|please run \/login|invalid api key|authentication_failed|login required|401 unauthorized|missing bearer/i,
    finding: (kind, words) => ({ detail: `the agent is not logged in: ${words}`, fix: LOGIN_HOW[kind] }),
  },
  {
    pattern: /not inside a trusted directory/i,
    finding: (_kind, words) => ({
      detail: `Codex refused to run outside a git repository: ${words}`,
      fix:
        'start the daemon with the repository its lanes work in, --repo PATH: each lane then runs in a git worktree of it, where Codex ' +
        'runs as it is (`runledger doctor --repo PATH` checks it); or add --skip-git-repo-check (--exec "codex exec --skip-git-repo-check")',
    }),
  },
  {
    pattern: /usage limit|limit reached|rate limit|hit your limit/i,
    finding: (_kind, words) => ({
      detail: `the login's usage limit is reached: ${words}`,
      fix: 'wait for the reset it names, or run with another login; the daemon itself parks such a run until the reset',
    }),
  },
];

/** The trouble of a turn that gave no usable answer, as a person can act on it. */
export function troubleOf(kind: AgentKind, turn: TurnTrouble): Finding {
  if (turn.outcome === 'timed_out') {
    return {
      detail: `no answer within ${turn.budgetS} s`,
      fix:
        'raise --timeout-s if the agent is only slow (the daemon: --timeout-s for runs that carry none, timeout_s per run); an agent ' +
        'that waits for input (a permission prompt, a login in a browser) never answers on a pipe: make it headless',
    };
  }
  const texts = `${turn.said}\n${turn.error}`;
  for (const rule of RULES) {
    const words = lineMatching(texts, rule.pattern);
    if (words !== null) return rule.finding(kind, words);
  }
  if (turn.outcome === 'failed_to_start') return { detail: turn.error, fix: 'check that the command runs by hand: `echo ping | COMMAND`' };
  return { detail: turn.error, fix: formatFix(kind) };
}

function formatFix(kind: AgentKind): string {
  switch (kind) {
    case 'claude':
      return (
        'Claude Code must end with a stream-json `result` event: run the command by hand, `echo ping | COMMAND`, and read what ' +
        'it prints; keep --output-format stream-json (or json), not text'
      );
    case 'codex':
      return 'Codex must print exec --json events ending in turn.completed: run the command by hand, `echo ping | COMMAND`, and read what it prints';
    case 'plain':
      return 'run the command by hand, `echo ping | COMMAND`: it must print its answer on stdout and exit 0';
    default: {
      const unknown: never = kind;
      return String(unknown);
    }
  }
}

/** Stream events read as plain text: the program is a wrapper of claude or codex not named after it. */
export function looksLikeEvents(reply: string): boolean {
  return /^\s*\{"type":\s*"(system|assistant|result|thread\.started|turn\.started|item\.\w+|turn\.completed)"/.test(reply);
}

/** The first line of `text` that matches, trimmed to a readable length; null when none does. */
function lineMatching(text: string, pattern: RegExp): string | null {
  const line = text.split('\n').find((l) => pattern.test(l));
  return line === undefined ? null : quote(line.trim());
}

/** `text` quoted, cut to a line's length. */
export function quote(text: string, chars = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > chars ? `${flat.slice(0, chars - 1)}…` : flat);
}
