import type { Clock } from '../runtime/clock.ts';
import type { DomainEvent, EventData, NewDomainEvent } from '../../events/catalog.ts';
import type { EventStore } from '../../events/store/eventStore.ts';
import { hydrateStates } from '../../projections/hydrate.ts';
import { laneSessionsProjection } from '../../projections/laneSessions.ts';
import { decideAndAppend } from '../runtime/decideAndAppend.ts';
import { decideStep } from '../runtime/decideStep.ts';
import type { AgentHandle } from '../run/execution/agentProcess.ts';
import { agentKindOf } from '../run/resume.ts';
import { runDecider } from '../run/runDecider.ts';
import { type RunExecution, initialRunExecution } from '../run/runState.ts';
import { stderrLog } from '../runtime/untilRecorded.ts';
import { type RunEffectsContext, spawnConsumer } from './runEffects.ts';

/**
 * One turn run on this machine by `runledger run` (SPEC section 4, "Execution"), exactly as the
 * daemon's computer runs a claimed one: the same run decider (budget, one deadline, a refused resume
 * retried fresh, session memory) and the same spawn (budget words, resume arguments, the output
 * reader the command needs). What differs is only that no board holds it: it is handed over as
 * `local`, so it is never heartbeated or completed, and settles when its process ends.
 *
 * With a store, every input and decision is recorded in `<computer>/run:<id>` like any run's, so the
 * lane's session memory (`lane.session.remembered` / `forgotten`) is the daemon's own, and `audit`
 * and `replay` read the turn like any other. Without one (a dry run) the same steps are only folded
 * in memory: nothing is written anywhere.
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
}

export interface LocalTurnResult {
  readonly runId: string;
  readonly ok: boolean;
  readonly reply: string | null;
  readonly error: string | null;
  /** The session the lane resumes next, after this turn. */
  readonly laneSession: string | null;
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
  const { store, clock, runId } = options;
  const stream = `${options.computer}/run:${runId}`;
  const handles = new Map<string, AgentHandle>();
  let state: RunExecution = initialRunExecution();
  const versions = new Map<string, number>();
  let laneSession = options.laneSession;
  let exit: EventData<'run.process.exited'> | null = null;
  let settle!: (result: LocalTurnResult) => void;
  let fail!: (error: unknown) => void;
  const result = new Promise<LocalTurnResult>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });

  // One input at a time, like the run actor's mailbox; effects run outside it, after the commit.
  let mailbox: Promise<unknown> = Promise.resolve();
  const input = (event: NewDomainEvent): Promise<void> => {
    const step = mailbox.then(() => decide(event));
    mailbox = step.catch(fail);
    return step;
  };

  const decide = async (event: NewDomainEvent): Promise<void> => {
    if (event.type === 'run.process.exited') exit = event.data;
    let decisions: readonly NewDomainEvent[];
    if (store) {
      const outcome = await decideAndAppend(store, runDecider, state, event, versions, (s) => store.streamVersion(s));
      // This process holds the computer's lock: nobody else writes the run's stream.
      if (!outcome.ok) throw outcome.conflict;
      state = outcome.state;
      decisions = outcome.decisions;
    } else {
      const step = decideStep(runDecider, state, event);
      if (!step) return;
      state = step.state;
      decisions = step.decisions;
    }
    for (const decision of decisions) perform(decision);
  };

  const spawn = spawnConsumer({
    computer: options.computer,
    store: store ?? unwritable,
    clock,
    exec: options.exec,
    kind: agentKindOf(options.exec),
    workspaceRoot: options.workspaceRoot,
    killGraceMs: options.killGraceMs ?? 5_000,
    handles,
    input: (_runId, event) => input(event),
    runToken: async () => null,
    phaseOf: () => state.phase,
    promptOf: () => options.prompt,
    board: noBoard,
    log: stderrLog,
  } satisfies RunEffectsContext);

  const perform = (decision: NewDomainEvent): void => {
    switch (decision.type) {
      case 'run.execution.requested': {
        const event = { ...decision, seq: 0, version: 0, cause: null, actor: '' } as DomainEvent;
        // A command that cannot start still ends in a recorded exit (`failed_to_start`), as on the daemon.
        spawn.perform(event, event).catch(fail);
        return;
      }
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
        const outcome = decision.data.result ?? { ok: false, error: decision.data.reason };
        settle({ runId, ok: outcome.ok, reply: outcome.ok ? (exit?.reply ?? null) : null, error: outcome.ok ? null : (outcome.error ?? null), laneSession });
        return;
      }
      default:
        return;
    }
  };

  void input({
    stream,
    type: 'run.handed.over',
    data: { runId, lane: options.lane, budgetS: options.budgetS, laneSession: options.laneSession, local: true },
    at: clock.now(),
  }).catch(fail);

  return {
    result,
    stop() {
      for (const handle of handles.values()) handle.kill();
    },
  };
}

/** A local turn has no board: nothing of the spawn effect calls it. */
const noBoard: RunEffectsContext['board'] = {
  reply: async () => ({ status: 0 }),
  complete: async () => ({ status: 0 }),
};

/**
 * A dry run has no log. The spawn effect reads the log only for a prompt it was not given (after a
 * restart), which a local turn always has; anything else reaching here is a bug worth hearing about.
 */
const unwritable = new Proxy({} as EventStore, {
  get(_target, name) {
    throw new Error(`a dry run touches no log (it asked for ${String(name)})`);
  },
});
