import type { AgentResult } from '../../actors/run/agentResult.ts';
import type { RunInput } from '../../actors/run/decideRun.ts';
import { initialRunExecution, type RunExecution } from '../../actors/run/runState.ts';
import type { AgentHandle } from '../../adapters/agent/agentProcess.ts';
import type { DomainEvent, EventData } from '../../events/catalog.ts';
import { wordExecutionReason } from '../../events/executionReasons.ts';
import { laneSessionsProjection } from '../../projections/laneSessions.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import { stderrLog } from '../../runtime/actors/untilRecorded.ts';
import { hydrateStates } from '../../runtime/folds/hydrate.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { openSqliteStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { RunActors } from './runActor.ts';
import { agentSettingsOf, type RunEffectsContext, spawnConsumer } from './runEffects.ts';

/**
 * One turn run on this machine by `runledger run` (docs/rules.md#computer-behaviour, "Execution"), exactly as the
 * daemon's computer runs a claimed one: the same run decider (budget, one deadline, a refused resume
 * retried fresh, session memory) and the same spawn (budget words, resume arguments, the output
 * reader the command needs). What differs is only that no board holds it: it is handed over as
 * `local`, so it is never heartbeated or completed, and settles when its process ends.
 *
 * With a store, every input and decision is recorded in `<computer>/run:<id>` like any run's, so the
 * lane's session memory (`lane.session.remembered` / `forgotten`) is the daemon's own, and `audit`
 * and `replay` read the turn like any other. Without one (a dry run) the same steps are recorded in
 * a log in memory, dropped when the turn ends: nothing is written anywhere.
 */

export interface LocalTurnOptions {
  /** Where the turn is recorded; null for a dry run. */
  readonly store: EventStore | null;
  readonly clock: Clock;
  readonly computer: string;
  readonly runId: string;
  readonly lane: string;
  readonly prompt: string;
  readonly exec: string;
  /** The lane's workspace is `<workspaceRoot>/<lane>`, as on the daemon. */
  readonly workspaceRoot: string;
  /** The turn's budget in seconds; 0 = no limit. */
  readonly budgetS: number;
  /** The session this turn resumes (see `rememberedSession`), or null for a fresh one. */
  readonly laneSession: string | null;
  readonly killGraceMs?: number;
  /** The budget sentence ahead of the prompt, as on the daemon; on by default. */
  readonly budgetNote?: boolean;
}

export interface LocalTurnResult {
  readonly runId: string;
  readonly ok: boolean;
  readonly reply: string | null;
  readonly error: string | null;
  /** The session the lane resumes next, after this turn. */
  readonly laneSession: string | null;
  /** Each process the turn ran, in order: two when a refused resume was retried fresh. */
  readonly processes: readonly LocalProcess[];
}

/**
 * One process of a local turn, for a caller that looks closer than the turn's result (`runledger
 * doctor` tells a refused resume, a login prompt or a reply in the wrong format apart by these).
 */
export interface LocalProcess {
  /** The session it was started to resume, or null for a fresh start (or a command that never started). */
  readonly resuming: string | null;
  /** Its exit, as the run decider was told it. */
  readonly exit: EventData<'run.process.exited'>;
  /** What its output reader made of it (the reply, or why there was none); null when it never started. */
  readonly agent: Promise<AgentResult> | null;
}

export interface LocalTurn {
  readonly result: Promise<LocalTurnResult>;
  /** Stops the agent's process group (a signal to `runledger run`): the turn ends as killed. */
  stop(): void;
}

/** The session a lane of `computer` resumes next, as the log's lane-sessions projection has it. */
export async function rememberedSession(store: EventStore, computer: string, lane: string): Promise<string | null> {
  const [byComputer] = await hydrateStates(store, [laneSessionsProjection]);
  return byComputer[computer]?.[lane] ?? null;
}

export function startLocalTurn(options: LocalTurnOptions): LocalTurn {
  const handles = new Map<string, AgentHandle>();
  let settle!: (result: LocalTurnResult) => void;
  let fail!: (error: unknown) => void;
  const result = new Promise<LocalTurnResult>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const ended = result.then(
    () => undefined,
    () => undefined,
  );
  const stop = { asked: false };
  run(options, { handles, settle, fail, ended, stop }).catch(fail);
  return {
    result,
    stop() {
      stop.asked = true;
      for (const handle of handles.values()) handle.kill();
    },
  };
}

/**
 * The turn through the daemon's own run actor (one input at a time, decided and appended by the one
 * core, a stale one decided again), with `failFast`: a log that cannot take an input fails the turn at
 * once instead of waiting for a freed disk, since a person waits on `runledger run`.
 */
async function run(options: LocalTurnOptions, turn: TurnHooks): Promise<void> {
  const { clock, runId } = options;
  const { handles, settle, fail } = turn;
  // A dry run records into a log in memory, dropped when the turn ends: the same steps, nothing written anywhere.
  const store = options.store ?? (await openSqliteStore(':memory:'));
  // Every crash of the run's actor fails the turn with its error, at once: one in `receive` was told
  // to its asker too, but one while folding the run from the log (a disk that fails a read) drops the
  // input unanswered, and `runledger run` would otherwise wait out the query's 30 s timeout.
  const system = startActorSystem({ clock, onError: (crash) => fail(crash.error) });
  let state: RunExecution = initialRunExecution();
  let laneSession = options.laneSession;
  let exit: EventData<'run.process.exited'> | null = null;
  const processes: LocalProcess[] = [];
  let started: Omit<LocalProcess, 'exit'> | null = null;
  const runs = new RunActors(system, store, options.computer, (_runId, run, decisions) => {
    state = run;
    for (const decision of decisions) perform(decision);
  });
  const input = async (event: RunInput): Promise<void> => {
    // The spawn put the agent's handle in `handles` before telling its start.
    if (event.type === 'run.process.began') {
      started = { resuming: event.data.resuming, agent: handles.get(runId)?.result ?? null };
      // A stop asked while it was being spawned (the launcher forks the agent before this process hears
      // its pid) found no process to kill: this one is killed now it is known, a retry's as well.
      if (turn.stop.asked) handles.get(runId)?.kill();
    }
    if (event.type === 'run.process.exited') {
      exit = event.data;
      processes.push({ resuming: started?.resuming ?? null, agent: started?.agent ?? null, exit: event.data });
      started = null;
    }
    try {
      const outcome = await runs.input(runId, event, { failFast: true });
      if (outcome.ok) state = outcome.state;
    } catch (error) {
      fail(error);
      throw error;
    }
  };

  const spawn = spawnConsumer({
    computer: options.computer,
    store,
    clock,
    ...agentSettingsOf(options),
    workspaceRoot: options.workspaceRoot,
    handles,
    input: (_runId, event) => input(event),
    runToken: async () => null,
    phaseOf: () => state.phase,
    promptOf: () => options.prompt,
    board: noBoard,
    log: stderrLog,
  } satisfies RunEffectsContext);

  const perform = (decision: DomainEvent): void => {
    switch (decision.type) {
      case 'run.execution.requested':
        // A command that cannot start still ends in a recorded exit (`failed_to_start`), as on the daemon.
        spawn.perform(decision, decision).catch(fail);
        return;
      case 'run.kill.requested':
        handles.get(runId)?.kill();
        return;
      case 'lane.session.remembered':
        laneSession = decision.data.sessionId;
        return;
      case 'lane.session.forgotten':
        if (laneSession === decision.data.sessionId) laneSession = null;
        return;
      case 'run.settled': {
        const outcome = decision.data.result ?? { ok: false, error: wordExecutionReason(decision.data.reason) };
        settle({
          runId,
          ok: outcome.ok,
          reply: outcome.ok ? (exit?.reply ?? null) : null,
          error: outcome.ok ? null : (outcome.error ?? null),
          laneSession,
          processes,
        });
        return;
      }
      default:
        return;
    }
  };

  try {
    await input({
      stream: `${options.computer}/run:${runId}`,
      type: 'run.handed.over',
      data: { runId, lane: options.lane, budgetS: options.budgetS, laneSession: options.laneSession, local: true },
      at: clock.now(),
    });
    await turn.ended;
  } finally {
    // The turn is over: its actor's passivation timer must not keep `runledger run` alive.
    runs.stop(runId);
    stopSystem(system);
    if (!options.store) await store.close();
  }
}

interface TurnHooks {
  /** The agent's process, once spawned: `stop()` kills it. */
  readonly handles: Map<string, AgentHandle>;
  readonly settle: (result: LocalTurnResult) => void;
  readonly fail: (error: unknown) => void;
  /** Settles with the turn's result, either way. */
  readonly ended: Promise<void>;
  /** Set by `stop()`: every process of the turn is killed once it began. */
  readonly stop: { asked: boolean };
}

/** A local turn has no board: nothing of the spawn effect calls it. */
const noBoard: RunEffectsContext['board'] = {
  reply: async () => ({ status: 0 }),
  complete: async () => ({ status: 0 }),
};
