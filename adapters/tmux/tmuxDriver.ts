import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import type { Activity, Turn } from '../../events/sessionEvents.ts';
import { codeOf, messageOf } from '../../events/thrown.ts';
import type { SessionAtRead, SessionDriver, StopOutcome } from './sessionDriver.ts';

/**
 * The programs an agent pane runs in its foreground: Claude Code's, Codex's, and node (an agent
 * installed through npm). A pane running one of these runs an agent, read or not; one running
 * anything else (the shell it fell back to) runs none.
 */
export const AGENT_COMMANDS: readonly string[] = ['claude', 'claude.exe', 'codex', 'codex.exe', 'node'];

/**
 * The pane options a launcher sets on an agent's pane (`tmux set-option -p -t PANE @runledger-session ID`):
 * which session runs there (or, before one is known, the launch's key), the file the agent writes
 * its record to, and, where the agent publishes it (a hook of the agent's), its turn.
 */
export const PANE_OPTIONS = {
  session: '@runledger-session',
  launch: '@runledger-launch',
  record: '@runledger-record',
  turn: '@runledger-turn',
} as const;

export interface TmuxDriverOptions {
  /** `tmux -L SOCKET`: a server of its own (tests); the default server when absent. */
  readonly socket?: string;
  readonly agents?: readonly string[];
  readonly timeoutMs?: number;
}

interface Pane {
  readonly id: string;
  readonly command: string;
  readonly dead: boolean;
  readonly session: string;
  readonly launch: string;
  readonly record: string;
  readonly turn: string;
}

const FIELDS = ['#{pane_id}', '#{pane_current_command}', '#{pane_dead}', ...Object.values(PANE_OPTIONS).map((o) => `#{${o}}`)];
const TURNS = new Set<Turn>(['idle', 'working', 'needs_input']);
/** What tmux says when there is no server, or no such pane: nothing of the session is there. */
const ABSENT = /no server running|error connecting to|can't find pane|can't find window|can't find session/i;

/**
 * Sessions as tmux panes running the agent. A pane is found by the session id (or launch key) in its
 * options, read by its foreground command and the session's own record file (its last write is the
 * `mark`), and stopped by killing the pane; the agent's own session files are left, so a later turn
 * resumes it.
 */
export function tmuxDriver(options: TmuxDriverOptions = {}): SessionDriver {
  const agents = new Set((options.agents ?? AGENT_COMMANDS).map((a) => a.toLowerCase()));
  const tmux = (args: string[]) => run(options.socket ? ['-L', options.socket, ...args] : args, options.timeoutMs ?? 5_000);
  return {
    name: 'tmux',
    async read(session: SessionAtRead): Promise<Activity> {
      const pane = (await listPanes(tmux)).find((p) => p.session === session.sessionId || (p.session === '' && p.launch === session.sessionId));
      if (!pane) return { presence: 'gone', turn: 'unknown', mark: null, target: null, seen: 'no tmux pane of it is open' };
      const target = `tmux:${pane.id}`;
      const command = pane.command.split(/[\\/]/).pop()!.toLowerCase();
      if (pane.dead) return { presence: 'stopped', turn: 'unknown', mark: null, target, seen: `pane ${pane.id}'s program has exited` };
      if (!agents.has(command))
        return {
          presence: 'stopped',
          turn: 'unknown',
          mark: null,
          target,
          seen: `pane ${pane.id} runs ${command || 'a program it does not name'}, no agent`,
        };
      const turn = TURNS.has(pane.turn as Turn) ? (pane.turn as Turn) : 'unknown';
      const mark = pane.record ? await lastWrite(pane.record) : null;
      const record = !pane.record
        ? 'it names no record'
        : mark === null
          ? `its record ${pane.record} is not there`
          : `its record last written ${new Date(mark).toISOString().slice(11, 23)}`;
      return { presence: 'running', turn, mark, target, seen: `pane ${pane.id} runs ${command}; ${record}` };
    },
    async stop(target: string): Promise<StopOutcome> {
      const pane = /^tmux:(%\d+)$/.exec(target)?.[1];
      if (!pane) return { ok: false, detail: `the tmux driver cannot stop ${target}` };
      try {
        await tmux(['kill-pane', '-t', pane]);
        return { ok: true, detail: `pane ${pane} killed` };
      } catch (error) {
        const message = messageOf(error);
        if (ABSENT.test(message)) return { ok: true, detail: `pane ${pane} was gone already` };
        return { ok: false, detail: `tmux kill-pane -t ${pane} failed: ${message.slice(0, 300)}` };
      }
    },
  };
}

async function listPanes(tmux: (args: string[]) => Promise<string>): Promise<Pane[]> {
  let out: string;
  try {
    out = await tmux(['list-panes', '-a', '-F', FIELDS.join('\t')]);
  } catch (error) {
    if (ABSENT.test(messageOf(error))) return [];
    throw error;
  }
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id = '', command = '', dead = '', session = '', launch = '', record = '', turn = ''] = line.split('\t');
      return { id, command, dead: dead === '1', session, launch, record, turn };
    });
}

async function lastWrite(path: string): Promise<number | null> {
  try {
    return Math.floor((await stat(path)).mtimeMs);
  } catch (error) {
    // ENOENT: the record is not there (yet, or any more), which the read says; anything else goes up.
    if (codeOf(error) === 'ENOENT') return null;
    throw error;
  }
}

function run(args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('tmux', args, { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${String(stderr || error.message).trim()}`));
      else resolve(stdout);
    });
  });
}
