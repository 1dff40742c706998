import type { AgentKind } from '../../adapters/agent/outputReaders.ts';
import type { AgentOutcome, AgentResult } from './agentResult.ts';
import { insertAt, programName, type SimpleCommand, simpleCommand } from './commandLine.ts';

/**
 * Resuming a lane's agent session (docs/rules.md#computer-behaviour, "Execution"): the command line of a resumed turn,
 * how to tell that the agent refused to resume, and when the lane remembers or forgets its session.
 *
 * The convention, for a command template configured with `--exec`:
 * - `RUNLEDGER_SESSION_ID` is set in the command's environment to the session being resumed, and
 *   removed from it on a fresh turn (so a daemon started from inside a run does not leak its own).
 * - `{resume}` in the template is replaced by the kind's resume arguments on a resumed turn and by
 *   nothing on a fresh one: `--resume '<id>'` for claude and plain, `resume '<id>'` for codex
 *   (`codex exec --json {resume}`).
 * - Without `{resume}`, a claude or codex command gets those arguments after its own (see
 *   `turnCommand`, which also makes them headless); a plain command is left as it is and learns the
 *   session from the environment alone.
 */

/**
 * Ids become part of a shell command line on the next turn and name the session in the log, so
 * only plain tokens are accepted; anything else is treated as no announcement at all. Here, not
 * with the output readers that also ask: the run decider asks too, and must not load a stdout
 * decoder (node:string_decoder) to do so.
 */
export function isUsableSessionId(id: unknown): id is string {
  return typeof id === 'string' && /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(id);
}

export const SESSION_ENV = 'RUNLEDGER_SESSION_ID';
export const RESUME_PLACEHOLDER = '{resume}';

export interface TurnCommand {
  readonly command: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The session this turn resumes, or null for a fresh turn. */
  readonly resuming: string | null;
}

/**
 * The command line of one turn (docs/rules.md#computer-behaviour, "Execution"). A command whose program is `claude`
 * runs Claude Code headless: `-p --output-format stream-json --verbose`, whichever are missing, go
 * right after the program, and a resumed turn ends with `--resume <id>`. A `codex` command runs
 * `codex exec --json` (`exec` after the program, `--json` after `exec`, where missing), resumed
 * with `resume <id>` after the user's flags (before a final `-`, the stdin marker). The rest of what
 * the user typed stays as typed. A remembered id that is not a plain token (it could only have come
 * from a damaged record) is not put on a command line: the turn starts fresh instead.
 */
export function turnCommand(template: string, kind: AgentKind, sessionId: string | null): TurnCommand {
  const resuming = sessionId !== null && isUsableSessionId(sessionId) ? sessionId : null;
  const line = simpleCommand(template);
  const agent = agentOf(line);
  const placeholder = template.includes(RESUME_PLACEHOLDER);
  const inserts = agent === 'claude' ? claudeInserts(line) : agent === 'codex' ? codexInserts(line) : [];
  // The reader's kind says how to resume even when the program is a wrapper of the agent (a script).
  const resumer = kind === 'plain' ? null : (agent ?? kind);
  if (resuming !== null && !placeholder && resumer !== null && line.words.length > 0) inserts.push(resumeInsert(line, resumer, resuming));
  let command = insertAt(template, inserts);
  if (placeholder) command = command.split(RESUME_PLACEHOLDER).join(resuming === null ? '' : resumeArgs(agent ?? kind, resuming));
  return { command, env: { [SESSION_ENV]: resuming ?? undefined }, resuming };
}

type Agent = 'claude' | 'codex';

function agentOf(line: SimpleCommand): Agent | null {
  const program = programName(line);
  return program === 'claude' || program === 'codex' ? program : null;
}

/** The user's own arguments (after the program), as the program receives them. */
const argsOf = (line: SimpleCommand): string[] => line.words.slice(1).map((word) => word.text);

/** `--name value` or `--name=value`: the value, or null when the flag is not given. */
function longFlag(args: readonly string[], name: string): string | null {
  for (const [i, arg] of args.entries()) {
    if (arg === name) return args[i + 1] ?? '';
    if (arg.startsWith(`${name}=`)) return arg.slice(name.length + 1);
  }
  return null;
}

/** Print mode refuses stream-json without `--verbose` ("When using --print, --output-format=stream-json requires --verbose"). */
function claudeInserts(line: SimpleCommand): { at: number; text: string }[] {
  const args = argsOf(line);
  const format = longFlag(args, '--output-format');
  const missing: string[] = [];
  if (!args.some((arg) => arg === '-p' || arg === '--print')) missing.push('-p');
  if (format === null) missing.push('--output-format stream-json');
  if ((format ?? 'stream-json') === 'stream-json' && !args.includes('--verbose')) missing.push('--verbose');
  return missing.length === 0 ? [] : [{ at: line.words[0]!.end, text: ` ${missing.join(' ')}` }];
}

/** Bare `codex` starts its terminal UI, which fails on a pipe; `codex e` is its alias of `exec`. */
function codexInserts(line: SimpleCommand): { at: number; text: string }[] {
  const args = argsOf(line);
  const json = args.some((arg) => arg === '--json' || arg === '--experimental-json');
  const exec = args[0] === 'e' ? 1 : line.words.findIndex((word, i) => i > 0 && word.text === 'exec');
  if (exec === -1) return [{ at: line.words[0]!.end, text: json ? ' exec' : ' exec --json' }];
  return json ? [] : [{ at: line.words[exec]!.end, text: ' --json' }];
}

function resumeInsert(line: SimpleCommand, agent: Agent, id: string): { at: number; text: string } {
  const last = line.words.at(-1)!;
  if (agent === 'codex' && line.words.length > 1 && last.text === '-') return { at: last.start, text: `${resumeArgs(agent, id)} ` };
  return { at: line.end, text: ` ${resumeArgs(agent, id)}` };
}

function resumeArgs(kind: AgentKind, id: string): string {
  return kind === 'codex' ? `resume ${shellQuote(id)}` : `--resume ${shellQuote(id)}`;
}

/** Ids are plain tokens already; quoting anyway keeps a command line safe should that ever change. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Which reader a command's output needs, from its program: Claude Code speaks events (stream-json,
 * or one result object with `--output-format json`) unless the user asked for `text`; Codex speaks
 * them in `exec --json`, which every `codex` command runs; anything else is read as plain text.
 */
export function agentKindOf(command: string): AgentKind {
  const line = simpleCommand(command);
  const agent = agentOf(line);
  if (agent === 'claude') return longFlag(argsOf(line), '--output-format') === 'text' ? 'plain' : 'claude';
  return agent ?? 'plain';
}

/**
 * What agents say when the session they were asked to resume does not exist (any more): Claude Code's
 * "No conversation found with session ID", and the "not found" family of the others.
 */
const REFUSED_RESUME = [
  /no conversation found/i,
  /(session|conversation|thread)( id)?( \S+)? (was )?not found/i,
  /no (such )?(session|conversation|thread)\b/i,
  /(could not|cannot|can't|unable to|failed to) (find|resume|load) (the )?(session|conversation|thread)/i,
  /no rollout found/i,
  // Codex run over its app server: "thread/read failed: thread not loaded: <id>".
  /thread\/read failed/i,
  /thread not loaded/i,
];

/**
 * Whether a resumed turn failed because the agent refused the resume. Such a refusal ends at once,
 * before any work, so retrying fresh costs nothing of the budget. It exits non-zero, or says so in
 * its terminal event (Codex has been seen exiting 0 after a failed turn); a turn that was stopped
 * (timeout, cancel, kill) or that exited 0 with a usable reply was not refused.
 */
export function looksLikeRefusedResume(
  resuming: string | null,
  result: Pick<AgentResult, 'outcome' | 'exitCode' | 'reply' | 'stderrTail' | 'tail'>,
): boolean {
  if (resuming === null || result.outcome !== 'exited' || result.exitCode === null) return false;
  if (result.exitCode === 0 && result.reply.ok) return false;
  const said = [result.stderrTail, result.reply.ok ? result.reply.text.slice(0, 4_000) : result.reply.reason, result.tail].join('\n');
  return REFUSED_RESUME.some((pattern) => pattern.test(said));
}

/**
 * Whether to run the turn again, fresh, after a refused resume: only while the run's one deadline
 * has time left (a retry with none would be killed at once and reported as a timeout, a worse
 * message than the refusal), and never for a run that was cancelled meanwhile.
 */
export function shouldRetryFresh(args: {
  readonly resuming: string | null;
  readonly result: Pick<AgentResult, 'outcome' | 'exitCode' | 'reply' | 'stderrTail' | 'tail'>;
  readonly now: number;
  readonly deadlineAt: number | null;
  readonly cancelRequested?: boolean;
}): boolean {
  if (args.cancelRequested) return false;
  if (args.deadlineAt !== null && args.now >= args.deadlineAt) return false;
  return looksLikeRefusedResume(args.resuming, args.result);
}

/**
 * What happened to a turn, as far as its session is concerned. `announced`: the output just named
 * the session (mid-run); `rejected`: the reply was refused when posted; `resume_refused`: the agent
 * would not resume the remembered session.
 */
export type SessionMoment = 'announced' | 'succeeded' | 'failed' | 'rejected' | 'resume_refused' | 'timed_out' | 'cancelled' | 'killed';

/** A finished process's result as a session moment (a rejected reply is the caller's to say). */
export function sessionMomentOf(result: Pick<AgentResult, 'outcome' | 'exitCode' | 'reply'>): SessionMoment {
  if (result.outcome !== 'exited') return result.outcome satisfies Exclude<AgentOutcome, 'exited'>;
  return result.exitCode === 0 && result.reply.ok ? 'succeeded' : 'failed';
}

/**
 * The session a lane remembers after `moment`, given the one it remembered when the turn began
 * (`previous`; null after a refused resume) and the one this turn's output announced, if any.
 *
 * - An announced id is remembered at once: a run killed at hour two must keep its only handle on
 *   those two hours of the agent's context.
 * - A stopped run (timeout, cancel, kill) keeps it, so a later turn can carry the work on.
 * - An ordinary failure or a rejected reply forgets what this turn announced: its answer never
 *   reached the conversation, and resuming would carry on from a turn nobody saw. A turn that
 *   announced nothing leaves the remembered session as it was.
 * - A refused resume forgets the remembered session: it does not exist any more.
 */
export function sessionAfter(moment: SessionMoment, previous: string | null, announced: string | null): string | null {
  switch (moment) {
    case 'announced':
    case 'succeeded':
    case 'timed_out':
    case 'cancelled':
    case 'killed':
      return announced ?? previous;
    case 'failed':
    case 'rejected':
      return announced === null ? previous : null;
    case 'resume_refused':
      return null;
    default: {
      const unknown: never = moment;
      throw new Error(`unknown session moment ${String(unknown)}`);
    }
  }
}
