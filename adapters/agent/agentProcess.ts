import type { AgentOutcome, AgentResult } from '../../actors/run/agentResult.ts';
import { TailBuffer } from '../../actors/run/tailBuffer.ts';
import { type Clock, wakeAt } from '../../runtime/actors/clock.ts';
import { groupAlive, signalGroup } from '../../runtime/actors/processes.ts';
import { type AgentLauncher, sharedLauncher } from './launcher.ts';
import type { OutputReader } from './outputReaders.ts';
import { AGENT_MARK, newAgentMark, type Stray, startTicksOf, stopStrays } from './strays.ts';

/**
 * The agent command as a process (docs/rules.md#computer-behaviour, "Execution" and "Heartbeats, cancel, resolution").
 * It runs in a process group of its own, so stopping it reaches whatever it started (a shell, the
 * agent, the agent's tools): a group left behind would keep working, and writing, after its run
 * was reported over.
 */

export interface StartAgentOptions {
  /** A shell command line, run as `/bin/sh -c command`. */
  readonly command: string;
  readonly cwd: string;
  /** Written to the command's stdin, which is then closed. */
  readonly prompt: string;
  /** Laid over the daemon's environment; an `undefined` value removes the variable. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly reader: OutputReader;
  readonly clock: Clock;
  /** When the run must be over (the whole run's deadline, not this attempt's), or null for none. */
  readonly deadlineAt: number | null;
  /** Between SIGTERM to the group and SIGKILL to whatever is left of it. */
  readonly killGraceMs?: number;
  readonly stderrTailBytes?: number;
  /**
   * How long to wait for the output to close once the command exited. A process the agent left
   * behind can hold the pipe open for ever; the run is over when the command is.
   */
  readonly drainMs?: number;
  /** Who forks it: the process's shared launcher unless given one (tests give their own). */
  readonly launcher?: AgentLauncher;
}

export interface AgentHandle {
  /** The shell's pid, which is also the process group id; null if it could not be started. */
  readonly pid: number | null;
  readonly pgid: number | null;
  /**
   * The mark in its environment, which every process it starts inherits (strays.ts): recorded as it
   * begins, so that a later life can find what it left if this daemon dies first. Null if it never ran.
   */
  readonly mark: string | null;
  onSessionId(listener: (id: string) => void): () => void;
  readonly result: Promise<AgentResult>;
  /** Stops the group (SIGTERM, SIGKILL after the grace); the outcome becomes `cancelled`. */
  cancel(reason: string): void;
  /**
   * Stops the group for a reason other than a cancel (resolved elsewhere, shutdown, restart); the
   * outcome becomes `killed`. `force` sends SIGKILL at once instead of waiting out the grace.
   */
  kill(options?: { force?: boolean }): void;
}

export const DEFAULT_KILL_GRACE_MS = 5_000;
export const STDERR_TAIL_BYTES = 8 * 1024;
const DEFAULT_DRAIN_MS = 2_000;

/**
 * Starts the command through the agent launcher and resolves once it runs (or could not start); its
 * `result` resolves when it ended and its output closed.
 */
export async function startAgent(options: StartAgentOptions): Promise<AgentHandle> {
  const { reader, clock } = options;
  const startedAt = clock.now();
  const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const stderr = new TailBuffer(options.stderrTailBytes ?? STDERR_TAIL_BYTES);
  const launcher = options.launcher ?? sharedLauncher();

  let stoppedBy: Exclude<AgentOutcome, 'exited'> | null = null;
  let cancelReason: string | null = null;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  let outputClosed = false;
  let graceOver = false;
  let settled = false;
  const timers: (() => void)[] = [];
  let resolve!: (result: AgentResult) => void;
  const result = new Promise<AgentResult>((r) => (resolve = r));

  const mark = newAgentMark();
  let sweeping = false;
  const settle = (): void => {
    // Its exit and close can come in the same read as its launch's answer, before its pid is known here:
    // the sweep waits for the pid (the launch's answer settles again), or what it left would go unlooked-for.
    if (settled || sweeping || exit === null || !outputClosed || pid === null) return;
    // A stopped group is waited on until it is gone or has had its SIGKILL: a result must not claim
    // the run over while a grandchild that ignored SIGTERM still works.
    if (stoppedBy !== null && !graceOver && groupAlive(pid)) return;
    // What it left running (its group, what escaped it) goes before the result is told: see strays.ts.
    sweeping = true;
    void stopStrays(mark, pid, startedTicks, graceMs).then(finish);
  };
  const finish = (strays: readonly Stray[]): void => {
    if (exit === null) return;
    settled = true;
    for (const cancel of timers) cancel();
    reader.end();
    resolve({
      outcome: stoppedBy ?? 'exited',
      exitCode: exit.code,
      signal: exit.signal,
      reply: reader.finalReply(),
      tail: reader.unfinishedTail(),
      stderrTail: stderr.text().trim(),
      sessionId: reader.sessionId(),
      agentError: reader.agentError(),
      usage: reader.usage(),
      // The CLIs print reset times on the machine's own clock, in its zone.
      usageLimit: reader.usageLimit({ now: clock.now(), timeZone: localTimeZone, stderr: stderr.text() }),
      cancelReason,
      error: null,
      elapsedMs: clock.now() - startedAt,
      strays,
    });
  };

  let pid: number | null = null;
  let launchId: number | null = null;
  let startedTicks = 0;
  const launched = await launcher.launch(
    { command: options.command, cwd: options.cwd, env: { ...options.env, [AGENT_MARK]: mark }, prompt: options.prompt },
    {
      stdout: (chunk) => reader.push(chunk),
      stderr: (chunk) => stderr.push(chunk),
      exit(code, signal) {
        exit = { code, signal };
        if (!outputClosed) {
          timers.push(
            clock.after(options.drainMs ?? DEFAULT_DRAIN_MS, () => {
              if (launchId !== null) launcher.closeOutput(launchId);
              outputClosed = true;
              settle();
            }),
          );
        }
        settle();
      },
      close() {
        outputClosed = true;
        settle();
      },
      lost(reason) {
        // Nothing can tell this agent's end any more: it is stopped, not left to run unheard.
        stderr.push(`\n${reason}`);
        stop('killed', true);
        exit ??= { code: null, signal: null };
        outputClosed = true;
        settle();
      },
    },
  );
  if ('error' in launched) return failedToStart(launched.error, reader, startedAt, clock);
  launchId = launched.id;
  pid = launched.pid;
  // Its descendants start after it: the sweep at its end looks at those alone (strays.ts). Told by the
  // launcher, which reads it before the shell can be reaped; read here for a launcher that does not tell.
  // 0 when neither could: then every process is looked at.
  startedTicks = launched.startTicks || startTicksOf(pid);
  settle();

  function signalOwnGroup(signal: NodeJS.Signals): void {
    if (pid !== null) signalGroup(pid, signal);
  }

  let graceArmed = false;
  function stop(by: Exclude<AgentOutcome, 'exited'>, force: boolean, reason: string | null = null): void {
    if (settled) return;
    // The first stop names the outcome; one that comes after the command ended by itself only
    // cleans up what it left behind.
    if (stoppedBy === null && exit === null) {
      stoppedBy = by;
      cancelReason = reason;
    }
    if (force) {
      signalOwnGroup('SIGKILL');
      graceOver = true;
      settle();
      return;
    }
    if (graceArmed) return;
    graceArmed = true;
    signalOwnGroup('SIGTERM');
    timers.push(
      clock.after(graceMs, () => {
        if (groupAlive(pid)) signalOwnGroup('SIGKILL');
        graceOver = true;
        settle();
      }),
    );
  }

  // An agent can be over before its launch is answered (the launcher's spawned, exit and close can come
  // in one read): a deadline armed then is never cancelled, and would hold this agent for its budget.
  if (options.deadlineAt !== null && !settled) {
    // Never before the deadline, and a budget of days outlasts what one Node timer holds.
    timers.push(wakeAt(clock, options.deadlineAt, () => stop('timed_out', false)));
  }

  return {
    pid: launched.pid,
    pgid: launched.pid,
    mark,
    onSessionId: (listener) => reader.onSessionId(listener),
    result,
    cancel(reason) {
      stop('cancelled', false, reason);
    },
    kill(opts) {
      stop('killed', opts?.force ?? false);
    },
  };
}

function failedToStart(error: string, reader: OutputReader, startedAt: number, clock: Clock): AgentHandle {
  reader.end();
  return {
    pid: null,
    pgid: null,
    mark: null,
    onSessionId: (listener) => reader.onSessionId(listener),
    result: Promise.resolve({
      outcome: 'exited',
      exitCode: null,
      signal: null,
      reply: reader.finalReply(),
      tail: '',
      stderrTail: '',
      sessionId: null,
      agentError: null,
      usage: null,
      usageLimit: null,
      cancelReason: null,
      error,
      elapsedMs: clock.now() - startedAt,
      strays: [],
    }),
    cancel() {
      // nothing started: nothing to stop
    },
    kill() {
      // nothing started: nothing to stop
    },
  };
}

let zone: string | null = null;

/**
 * The machine's time zone (the one the agents' wall-clock reset times are printed in), read once: a new
 * Intl.DateTimeFormat at every run's exit cost 0.13 ms of the daemon's CPU a run (bench/profileEmbedded.ts).
 * Read only for a limit said with a wall-clock time: the first reading costs ~20 ms of CPU.
 */
function localTimeZone(): string {
  zone ??= Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return zone;
}
