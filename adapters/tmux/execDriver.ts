import type { RunExecution } from '../../actors/run/runState.ts';
import type { Activity } from '../../events/sessionEvents.ts';
import { groupAlive, signalGroup } from '../../runtime/actors/processes.ts';
import type { SessionAtRead, SessionDriver, StopOutcome } from './sessionDriver.ts';

export interface ExecDriverOptions {
  /** The computer's unsettled runs, by run id, as the log has them now (the executions projection). */
  readonly liveRuns: () => Promise<Record<string, RunExecution>> | Record<string, RunExecution>;
  /** TERM first, KILL after this long. */
  readonly killGraceMs?: number;
}

const TURN_PHASES = new Set<RunExecution['phase']>(['handed', 'requested', 'executing']);

/**
 * Sessions as `--exec` runs them: a resumable agent context, alive only while a run of it executes.
 * Its turn is a run of this computer executing in it (read from the log); what else can be alive of
 * it is the process group of a run whose end was never seen (a crash, a run resolved mid-turn), which
 * a close stops.
 */
export function execDriver(options: ExecDriverOptions): SessionDriver {
  const graceMs = options.killGraceMs ?? 5_000;
  return {
    name: 'exec',
    async read(session: SessionAtRead): Promise<Activity> {
      const runs = await options.liveRuns();
      for (const [runId, run] of Object.entries(runs)) {
        if (!TURN_PHASES.has(run.phase)) continue;
        const inIt =
          run.announced === session.sessionId || run.resuming === session.sessionId || (run.phase === 'handed' && run.session === session.sessionId);
        if (inIt) return { presence: 'running', turn: 'working', mark: null, target: null, seen: `run ${runId} is ${run.phase} in it` };
      }
      if (session.pid !== null && groupAlive(session.pid)) {
        return {
          presence: 'running',
          turn: 'idle',
          mark: null,
          target: `pgid:${session.pid}`,
          seen: `process group ${session.pid} of its ended run is still alive, in no turn`,
        };
      }
      return { presence: 'gone', turn: 'unknown', mark: null, target: null, seen: 'no process of it is alive' };
    },
    async stop(target: string): Promise<StopOutcome> {
      const pgid = Number(/^pgid:(\d+)$/.exec(target)?.[1]);
      if (!Number.isSafeInteger(pgid) || pgid <= 1) return { ok: false, detail: `the exec driver cannot stop ${target}` };
      if (!signalGroup(pgid, 'SIGTERM')) return { ok: true, detail: `process group ${pgid} was gone already` };
      for (const deadline = performance.now() + graceMs; performance.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (!groupAlive(pgid)) return { ok: true, detail: `process group ${pgid} stopped on TERM` };
      }
      signalGroup(pgid, 'SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 100));
      return groupAlive(pgid)
        ? { ok: false, detail: `process group ${pgid} is still alive after KILL` }
        : { ok: true, detail: `process group ${pgid} killed after ${graceMs} ms` };
    },
  };
}
