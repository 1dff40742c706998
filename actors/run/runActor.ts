import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import { type Clock, systemClock } from '../runtime/clock.ts';
import type { EventStore } from '../../events/store/eventStore.ts';
import { LogUnwritableError } from '../../events/store/logUnwritable.ts';
import type { StepOutcome } from '../runtime/decideAndAppend.ts';
import { type ActorSystem, type ReplyTo, child, query } from '../runtime/runtime.ts';
import { stepInActor } from '../runtime/stepInActor.ts';
import { untilRecorded } from '../runtime/untilRecorded.ts';
import { runDecider } from './runDecider.ts';
import type { RunExecution } from './runState.ts';

type Message = { readonly input: NewDomainEvent; readonly replyTo: ReplyTo<StepOutcome<RunExecution> | Error> };

interface RunActorState {
  state: RunExecution;
  readonly versions: Map<string, number>;
}

const QUERY_TIMEOUT_MS = 30_000;
/** A run nobody wrote to for this long leaves memory; its next input rehydrates it from its stream. */
const PASSIVATE_AFTER_MS = 10 * 60_000;

/**
 * One actor per claimed run, named after it: its inputs are decided one at a time, against the state
 * folded from the run's own stream. `afterCommit` performs what the decisions ask.
 */
export class RunActors {
  constructor(
    private readonly system: ActorSystem,
    private readonly store: EventStore,
    private readonly computer: string,
    private readonly afterCommit: (runId: string, run: RunExecution, decisions: readonly DomainEvent[]) => void,
    private readonly clock: Pick<Clock, 'after'> = systemClock,
  ) {}

  /**
   * Every input of a run is a fact of the world (an agent's exit, a board's answer, a timer): one the
   * log cannot take is sent again until it does, decided on the state the reset actor folds anew.
   */
  input(runId: string, input: NewDomainEvent): Promise<StepOutcome<RunExecution>> {
    return untilRecorded(this.clock, async () => {
      const ref = child<RunActorState, Message>(this.system, `run-${this.computer}-${runId}`, {
        hydrate: () => this.hydrate(runId),
        receive: (state, message) => this.receive(runId, state, message),
        passivateAfterMs: PASSIVATE_AFTER_MS,
      });
      const outcome = await query(ref, (replyTo) => ({ input, replyTo }), QUERY_TIMEOUT_MS);
      if (outcome instanceof Error) throw outcome;
      return outcome;
    });
  }

  private async hydrate(runId: string): Promise<RunActorState> {
    const stream = `${this.computer}/run:${runId}`;
    let run = runDecider.initialState(stream);
    const versions = new Map<string, number>();
    for (const event of await this.store.readStream(stream)) {
      run = runDecider.evolve(run, event);
      versions.set(stream, event.version);
    }
    return { state: run, versions };
  }

  private async receive(runId: string, state: RunActorState, message: Message): Promise<RunActorState> {
    try {
      const outcome = await stepInActor(this.store, runDecider, state, message.input, message.replyTo);
      if (outcome.decisions.length) this.afterCommit(runId, state.state, outcome.decisions);
      return state;
    } catch (error) {
      // Folded ahead of an append the log could not take: folded again from the log, quietly (no crash
      // to report: the asker was told, and sends the input again).
      if (error instanceof LogUnwritableError) return this.hydrate(runId);
      throw error;
    }
  }
}
