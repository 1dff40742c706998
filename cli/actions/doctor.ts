import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { AgentResult } from '../../actors/run/agentResult.ts';
import { simpleCommand, type Word } from '../../actors/run/commandLine.ts';
import { turnCommand } from '../../actors/run/resume.ts';
import type { AgentKind } from '../../adapters/agent/outputReaders.ts';
import { type LocalTurnResult, startLocalTurn } from '../../apps/computer/localTurn.ts';
import { agentSettingsOf } from '../../apps/computer/runEffects.ts';
import { messageOf } from '../../events/thrown.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import type { DoctorOptions } from '../commands/doctor.ts';
import { agentToRun, findAgentProgram } from '../shared/agentProgram.ts';
import { sandboxFinding } from './codexSandbox.ts';
import { type Finding, KIND_WORDS, looksLikeEvents, quote, troubleOf } from './doctorAdvice.ts';
import { addScratchWorktree, checkRepo, removeScratchWorktree } from './doctorRepo.ts';
import { untilDone } from './run.ts';

/**
 * `runledger doctor`: the agent command checked the way the daemon will run it. Each turn goes
 * through `runledger run --dry-run`'s path (startLocalTurn with no store: the daemon's run decider,
 * command building, spawn and output reader; a log in memory, dropped after), so what passes here is
 * what a lane will see: the program is found, a one-word prompt is answered in the format its kind
 * speaks, a session is announced, and a second turn resuming it is accepted, not refused and retried
 * fresh. With `--repo`, the repository is checked as the daemon will take it, and the turns run in a
 * scratch worktree of it, as a lane's do (Codex, say, runs only inside a git repository). Exit 0 when
 * every check passed (a warning says what a setting means, and passes), 1 otherwise; nothing is
 * written to the log.
 */

/** The options with the agent chosen (agentToRun): `--exec`, or the demo agent under `--demo`. */
type Checked = DoctorOptions & { readonly exec: string };

type Status = 'ok' | 'warning' | 'failed' | 'skipped';

const AGENT_CHECKS = ['program', 'answer', 'session', 'resume'] as const;

interface Check {
  readonly check: (typeof AGENT_CHECKS)[number] | 'repository' | 'checkout' | 'worktree' | 'sandbox';
  readonly status: Status;
  readonly detail: string;
  readonly fix?: string;
}

/** The lane the doctor's turns are of: its workspace is a folder of the scratch folder. */
const LANE = 'doctor';
const PROMPTS = ['ping', 'again'] as const;

export async function doctor(given: DoctorOptions): Promise<void> {
  const o = { ...given, exec: agentToRun(given, 'doctor') };
  const program = simpleCommand(o.exec).words[0]!;
  const { kind } = agentSettingsOf({ exec: o.exec });
  const scratch = scratchFolder(o.db);
  // A Ctrl-C (or SIGTERM) stops the turn running (untilDone) and every check after it: the person
  // stopped the doctor, so what it could not check is said as stopped, not as the agent's fault. Heard
  // between turns too, so the scratch folder is still removed.
  const onSignal = () => (signalled.value = true);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // The repository whose scratch worktree the turns run in, once it is made: removed in the end.
  let worktreeOf: string | null = null;
  const workspace = join(scratch, LANE);
  try {
    const checks: Check[] = [];
    if (o.repo !== undefined) {
      const repo = await checkRepo(o.repo);
      checks.push(...repo.findings);
      if (repo.top !== null) {
        const made = await addScratchWorktree(repo.top, workspace);
        checks.push(made);
        if (made.status === 'ok') worktreeOf = repo.top;
      }
      if (worktreeOf === null)
        for (const check of AGENT_CHECKS) checks.push({ check, status: 'skipped', detail: 'no worktree of the repository to run the agent in' });
    } else mkdirSync(workspace, { recursive: true });
    if (o.repo === undefined || worktreeOf !== null) checks.push(...(await runChecks(o, kind, program, workspace, scratch)));
    // What Codex may do in a lane's worktree: edit it, commit in it.
    if (worktreeOf !== null && kind === 'codex') checks.push({ check: 'sandbox', ...sandboxFinding(o.exec) });
    report(o, kind, checks);
    process.exitCode = checks.every((c) => c.status !== 'failed') ? 0 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (worktreeOf !== null) await removeScratchWorktree(worktreeOf, workspace);
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Set by the first Ctrl-C or SIGTERM. */
const signalled = { value: false };
const STOPPED: Finding = { detail: 'stopped (Ctrl-C or a signal) before it answered: not checked' };

async function runChecks(o: Checked, kind: AgentKind, program: Word, workspace: string, scratch: string): Promise<Check[]> {
  const checks: Check[] = [];
  const skipRest = (why: string): Check[] => {
    for (const check of AGENT_CHECKS) if (!checks.some((c) => c.check === check)) checks.push({ check, status: 'skipped', detail: why });
    return checks;
  };
  const found = findAgentProgram(o.exec, program, workspace);
  checks.push({ check: 'program', status: found.found ? 'ok' : 'failed', detail: found.detail, ...(found.fix ? { fix: found.fix } : {}) });
  if (checks[0]!.status === 'failed') return skipRest('the program was not found');

  const first = await turn(o, scratch, PROMPTS[0], null);
  const answer = answerCheck(kind, first, o.timeoutS);
  checks.push(answer);
  if (answer.status === 'failed') return skipRest('no answer to read a session from');

  const session = first.result.laneSession ?? first.agent?.sessionId ?? null;
  if (kind === 'plain') {
    checks.push({
      check: 'session',
      status: 'ok',
      detail: 'no session: turns will not resume (a plain command announces none; each turn starts fresh)',
    });
    return skipRest('no session to resume');
  }
  if (session === null) {
    checks.push({
      check: 'session',
      status: 'failed',
      detail: 'no session id announced: turns will not resume',
      fix:
        kind === 'claude'
          ? 'Claude Code names its session in every stream-json event (session_id): run the command by hand, `echo ping | COMMAND`'
          : 'Codex names its thread in thread.started: run the command by hand, `echo ping | COMMAND`',
    });
    return skipRest('no session to resume');
  }
  checks.push({ check: 'session', status: 'ok', detail: `announced ${session}` });
  if (signalled.value) return skipRest('stopped (Ctrl-C or a signal)');
  checks.push(resumeCheck(o, kind, session, await turn(o, scratch, PROMPTS[1], session)));
  return checks;
}

interface Turn {
  readonly result: LocalTurnResult;
  /** The last process's reading of its output; null when it never started. */
  readonly agent: AgentResult | null;
  readonly seconds: number;
}

/** One turn exactly as `runledger run --dry-run` runs it: nothing recorded anywhere. */
async function turn(o: Checked, scratch: string, prompt: string, laneSession: string | null): Promise<Turn> {
  const started = performance.now();
  const result = await untilDone(
    startLocalTurn({
      store: null,
      clock: systemClock,
      computer: 'local',
      runId: `doctor-${randomUUID()}`,
      lane: LANE,
      prompt,
      exec: o.exec,
      workspaceRoot: scratch,
      budgetS: o.timeoutS,
      laneSession,
    }),
  );
  const last = result.processes.at(-1);
  return { result, agent: last?.agent ? await last.agent : null, seconds: (performance.now() - started) / 1000 };
}

function answerCheck(kind: AgentKind, first: Turn, budgetS: number): Check {
  const { result, agent } = first;
  const took = `(${first.seconds.toFixed(1)} s)`;
  if (!result.ok || result.reply === null) return { check: 'answer', status: 'failed', ...trouble(kind, first, budgetS) };
  const reply = quote(result.reply, 120);
  switch (kind) {
    case 'claude':
      return { check: 'answer', status: 'ok', detail: `stream-json with a result: ${reply} ${took}` };
    case 'codex':
      // Codex reports usage in turn.completed only: a reply without it came from a turn that never completed.
      if (agent?.usage === null || agent?.usage === undefined)
        return {
          check: 'answer',
          status: 'failed',
          detail: `an answer, ${reply}, but no turn.completed (with its usage) after it`,
          fix: 'Codex exec --json ends a turn with turn.completed: run the command by hand, `echo ping | COMMAND`, and read what it prints',
        };
      return { check: 'answer', status: 'ok', detail: `--json events ending in turn.completed: ${reply} ${took}` };
    case 'plain':
      if (looksLikeEvents(result.reply))
        return {
          check: 'answer',
          status: 'failed',
          detail: `the reply is an agent's stream of events, read as plain text: ${reply}`,
          fix:
            'runledger reads events only from a program named claude or codex: call the agent by that name (a wrapper script can be ' +
            'named claude), or have the wrapper print the answer alone',
        };
      return { check: 'answer', status: 'ok', detail: `plain text: ${reply} ${took}` };
    default: {
      const unknown: never = kind;
      throw new Error(`no answer check for ${String(unknown)}`);
    }
  }
}

function resumeCheck(o: Checked, kind: AgentKind, session: string, second: Turn): Check {
  const [tried, ...retried] = second.result.processes;
  const command = turnCommand(o.exec, kind, session).command;
  if (tried !== undefined && tried.resuming === session && retried.length > 0) {
    const said = [tried.exit.agentError, tried.exit.stderrTail].filter(Boolean).join('\n');
    return {
      check: 'resume',
      status: 'failed',
      detail: `the agent refused to resume ${session} (\`${command}\`): ${quote(said || 'no words')}; the daemon would run such a turn again fresh, forgetting the conversation`,
      fix:
        kind === 'claude'
          ? 'Claude Code keeps sessions per user and folder (~/.claude/projects/): the daemon must run each lane as the same user, HOME and CLAUDE_CONFIG_DIR'
          : 'Codex keeps threads per user (~/.codex/sessions/): the daemon must run as the same user, HOME and CODEX_HOME',
    };
  }
  if (!second.result.ok || second.result.reply === null) return { check: 'resume', status: 'failed', ...trouble(kind, second, o.timeoutS) };
  return { check: 'resume', status: 'ok', detail: `the next turn resumed it (\`${command}\`): ${quote(second.result.reply, 120)}` };
}

function trouble(kind: AgentKind, turn: Turn, budgetS: number): Finding {
  if (signalled.value) return STOPPED;
  const exit = turn.result.processes.at(-1)?.exit;
  const agent = turn.agent;
  return troubleOf(kind, {
    outcome: exit?.outcome ?? 'exited',
    exitCode: exit?.exitCode ?? null,
    error: turn.result.error ?? 'no usable reply',
    // A Claude verdict reads `<subtype>: <words>`; the words are what the agent said.
    said: [
      exit?.stderrTail,
      exit?.agentError?.replace(/^(success|error_[a-z_]+): /, ''),
      agent && !agent.reply.ok ? agent.reply.reason : '',
      exit?.tail,
    ]
      .filter(Boolean)
      .join('\n'),
    budgetS,
  });
}

/**
 * A folder for the turns, removed afterwards, beside the daemon's own workspaces (or the nearest
 * folder of theirs that exists): Codex runs only inside a git repository, so a scratch folder
 * elsewhere would not answer as a lane's workspace does.
 */
function scratchFolder(db: string): string {
  let base = join(dirname(resolve(db)), 'workspaces');
  while (!existsSync(base) && dirname(base) !== base) base = dirname(base);
  try {
    return mkdtempSync(join(base, '.runledger-doctor-'));
  } catch (error) {
    throw new Error(`no scratch folder for the doctor's turns could be made in ${base} (${messageOf(error)}): give --db a folder you can write`);
  }
}

function report(o: Checked, kind: AgentKind, checks: readonly Check[]): void {
  const ok = checks.every((c) => c.status !== 'failed');
  const command = turnCommand(o.exec, kind, null).command;
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ ok, exec: o.exec, kind, command, checks })}\n`);
    return;
  }
  const repo = o.repo === undefined ? '' : ` --repo ${JSON.stringify(o.repo)}`;
  const lines = [`runledger doctor: --exec ${JSON.stringify(o.exec)}${repo}`, `  runs: ${command}  (${KIND_WORDS[kind]})`];
  for (const c of checks) {
    lines.push(`${c.status.padEnd(7)} ${c.check.padEnd(8)} ${c.detail}`);
    if (c.fix) lines.push(`${''.padEnd(16)} fix: ${c.fix}`);
  }
  const failed = checks.filter((c) => c.status === 'failed').length;
  const warned = checks.filter((c) => c.status === 'warning').length;
  const warnings = warned === 0 ? '' : ` (${warned} warning${warned === 1 ? '' : 's'}: read what ${warned === 1 ? 'it means' : 'they mean'})`;
  lines.push(ok ? `every check passed${warnings}` : `${failed} check${failed === 1 ? '' : 's'} failed`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
