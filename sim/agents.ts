import type { AgentResult } from '../actors/run/agentResult.ts';
import type { AgentHandle, StartAgentOptions } from '../adapters/agent/agentProcess.ts';
import { wakeAt } from '../runtime/actors/clock.ts';
import type { Prng } from './prng.ts';
import type { LifeClock } from './scheduler.ts';

/** What a simulated agent does; read from its prompt, so a run behaves the same wherever it runs. */
export type Behaviour = 'answer' | 'fail' | 'hang' | 'flood' | 'refuse' | 'usage';
export const BEHAVIOURS: readonly Behaviour[] = ['answer', 'answer', 'answer', 'answer', 'fail', 'hang', 'flood', 'refuse', 'usage'];

export function simPrompt(runId: string, lane: string, behaviour: Behaviour, ms: number): string {
  return `[sim run=${runId} lane=${lane} do=${behaviour} ms=${ms}] please work`;
}

const PROMPT = /\[sim run=(\S+) lane=(\S+) do=(\w+) ms=(\d+)\]/;

/**
 * The login the agents of one machine share: once a `usage` run meets its limit (on its first turn),
 * every turn of the login meets it until the reset, as Claude's would; after it, turns go on as they would.
 */
export interface SimLogin {
  /** Virtual ms (the machine's clock) until which every turn meets the limit. */
  limitedUntil: number;
  /** `usage` runs that met the limit once: their next turn answers as usual. */
  readonly limitedRuns: Set<string>;
}

/** How long a login's limit lasts, in virtual seconds: Claude's is hours; two minutes (longer than the lease) keep worlds short. */
export const LIMIT_S = 120;

/** One start of an agent process, as the invariants see it. */
export interface Execution {
  readonly runId: string;
  readonly lane: string;
  readonly computer: string;
  readonly life: string;
  readonly startedAt: number;
  endedAt: number | null;
  readonly resuming: string | null;
  /** The session it runs in, once its agent said (a refused resume's is a fresh one it never keeps). */
  session: string | null;
}

export interface AgentsWorld {
  readonly executions: Execution[];
  /** The next fake pid: counted per world, so a world's log does not depend on the worlds run before it. */
  nextPid: number;
  /** Called as each process starts, before it runs: the invariants look at the world as it is then. */
  onStart(execution: Execution): void;
}

/** Fake pids beyond any kernel's pid_max (2^22): a signal to their group finds nothing (ESRCH), never a real process. */
export const FIRST_SIM_PID = 50_000_000;

/**
 * The agent processes of one computer life, as `startAgent` would start them: each speaks Claude
 * Code's stream-json to the real output reader, so sessions, refusals and failures are read by the
 * real code. A refused resume is what Claude says of a session it does not hold: sessions live on the
 * computer that ran them.
 */
export function simAgentStarter(options: {
  computer: string;
  life: string;
  clock: LifeClock;
  prng: Prng;
  sessions: Set<string>;
  login: SimLogin;
  world: AgentsWorld;
}): (start: StartAgentOptions) => Promise<AgentHandle> {
  const { clock, prng, sessions, login, world } = options;
  return async (start) => {
    if (!clock.owner.alive) return new Promise<never>(() => undefined);
    const m = PROMPT.exec(start.prompt);
    const [runId, lane, behaviour, ms] = m ? [m[1]!, m[2]!, m[3] as Behaviour, Number(m[4])] : ['?', '?', 'answer' as Behaviour, 1000];
    const resume = /--resume (\S+)/.exec(start.command)?.[1] ?? null;
    const execution: Execution = {
      runId,
      lane,
      computer: options.computer,
      life: options.life,
      startedAt: clock.now(),
      endedAt: null,
      resuming: resume,
      session: null,
    };
    world.executions.push(execution);
    world.onStart(execution);
    const pid = world.nextPid++;
    const { reader } = start;
    const startedAt = clock.now();
    let resolve!: (r: AgentResult) => void;
    const result = new Promise<AgentResult>((r) => (resolve = r));
    const timers: (() => void)[] = [];
    let done = false;
    let stoppedBy: 'timed_out' | 'cancelled' | 'killed' | null = null;
    let cancelReason: string | null = null;
    const line = (event: unknown) => reader.push(`${JSON.stringify(event)}\n`);
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (done) return;
      done = true;
      execution.endedAt = clock.now();
      for (const cancel of timers) cancel();
      reader.end();
      resolve({
        outcome: stoppedBy ?? 'exited',
        exitCode,
        signal,
        reply: reader.finalReply(),
        tail: reader.unfinishedTail(),
        stderrTail: '',
        sessionId: reader.sessionId(),
        agentError: reader.agentError(),
        usage: reader.usage(),
        // The world's zone is UTC: a reset the agent gives as a time of day reads the same on every machine.
        usageLimit: reader.usageLimit({ now: clock.now(), timeZone: () => 'UTC', stderr: '' }),
        cancelReason,
        error: null,
        elapsedMs: clock.now() - startedAt,
        strays: [],
      });
    };
    const later = (delay: number, fn: () => void) => timers.push(clock.after(delay, () => !done && fn()));
    const result_ = (fields: Record<string, unknown>) => line({ type: 'result', duration_ms: ms, num_turns: 1, total_cost_usd: 0.001, ...fields });

    // Claude answers a turn of a login at its limit at once, with the reset it gave before.
    const limited = () => clock.now() < login.limitedUntil;
    const sayLimit = (session: string) =>
      result_({
        subtype: 'success',
        is_error: true,
        session_id: session,
        result: `Claude AI usage limit reached|${Math.ceil(login.limitedUntil / 1000)}`,
      });
    if (limited()) {
      later(5, () => {
        const session = resume ?? prng.uuid();
        if (resume === null) sessions.add(session);
        execution.session = session;
        line({ type: 'system', subtype: 'init', session_id: session });
        sayLimit(session);
        finish(1, null);
      });
    } else if (resume !== null && (behaviour === 'refuse' || !sessions.has(resume))) {
      later(5, () => {
        const fresh = prng.uuid();
        execution.session = fresh;
        line({ type: 'system', subtype: 'init', session_id: fresh });
        result_({
          subtype: 'error_during_execution',
          is_error: true,
          session_id: fresh,
          errors: [`No conversation found with session ID: ${resume}`],
        });
        finish(1, null);
      });
    } else {
      const session = resume ?? prng.uuid();
      later(Math.min(ms, 10), () => {
        sessions.add(session);
        execution.session = session;
        line({ type: 'system', subtype: 'init', session_id: session });
      });
      if (behaviour !== 'hang') {
        later(ms, () => {
          if (behaviour === 'flood')
            for (let i = 0; i < 64; i++)
              line({ type: 'assistant', session_id: session, message: { content: [{ type: 'text', text: 'x'.repeat(4096) }] } });
          const answer = `answer of ${runId}`;
          line({ type: 'assistant', session_id: session, message: { content: [{ type: 'text', text: answer }] } });
          if (behaviour === 'fail') result_({ subtype: 'success', is_error: true, session_id: session, result: 'Credit balance is too low' });
          else if (behaviour === 'usage' && !login.limitedRuns.has(runId)) {
            login.limitedRuns.add(runId);
            login.limitedUntil = Math.max(login.limitedUntil, (Math.floor(clock.now() / 1000) + LIMIT_S) * 1000);
            sayLimit(session);
            return finish(1, null);
          } else result_({ subtype: 'success', is_error: false, session_id: session, result: answer });
          finish(behaviour === 'fail' ? 1 : 0, null);
        });
      }
    }
    const stop = (by: 'timed_out' | 'cancelled' | 'killed', force: boolean, reason: string | null = null) => {
      if (done) return;
      stoppedBy ??= by;
      if (by === 'cancelled') cancelReason ??= reason;
      // SIGTERM ends it after a moment (it flushes its output); SIGKILL at once.
      if (force) finish(null, 'SIGKILL');
      else later(prng.int(1, 50), () => finish(null, 'SIGTERM'));
    };
    if (start.deadlineAt !== null) timers.push(wakeAt(clock, start.deadlineAt, () => stop('timed_out', false)));
    return {
      pid,
      pgid: pid,
      mark: null,
      onSessionId: (listener) => reader.onSessionId(listener),
      result,
      cancel: (reason) => stop('cancelled', false, reason),
      kill: (opts) => stop('killed', opts?.force ?? false),
    };
  };
}
