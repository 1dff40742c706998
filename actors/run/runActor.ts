import type { DomainEvent } from '../../events/catalog.ts';
import { type EventStore, StaleVersionError } from '../../events/store/eventStore.ts';
import { LogUnwritableError } from '../../events/store/logUnwritable.ts';
import { type Clock, systemClock } from '../runtime/clock.ts';
import type { StepOutcome } from '../runtime/decideAndAppend.ts';
import { retryOnConflict } from '../runtime/retryOnConflict.ts';
import { type ActorRef, type ActorSystem, child, query, type ReplyTo, stop } from '../runtime/runtime.ts';
import { stepInActor } from '../runtime/stepInActor.ts';
import { type InputOptions, recordedUnlessFailFast } from '../runtime/untilRecorded.ts';
import type { RunDecision, RunInput } from './decideRun.ts';
import { runDecider } from './runDecider.ts';
import type { RunExecution } from './runState.ts';

type RunOutcome = StepOutcome<RunExecution, RunInput, RunDecision>;
type Message = { readonly input: RunInput; readonly replyTo: ReplyTo<RunOutcome | Error> };

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
   * log cannot take is sent again until it does (unless `failFast`), and one refused as stale is
   * decided again (retryOnConflict), each time on the state the reset actor folds anew from the log.
   */
  input(runId: string, input: RunInput, options: InputOptions = {}): Promise<RunOutcome> {
    return recordedUnlessFailFast(this.clock, options, () =>
      retryOnConflict(async () => {
        const outcome = await query(this.ref(runId), (replyTo) => ({ input, replyTo }), QUERY_TIMEOUT_MS);
        if (outcome instanceof StaleVersionError) return outcome;
        if (outcome instanceof Error) throw outcome;
        return outcome;
      }),
    );
  }

  /**
   * Stops the run's actor for good. Stopping the actor system is not enough: nact leaves its
   * passivation timer running, which keeps a one-shot process (`runledger run`) alive.
   */
  stop(runId: string): void {
    stop(this.ref(runId));
  }

  private ref(runId: string): ActorRef<Message> {
    return child<RunActorState, Message>(this.system, `run-${this.computer}-${runId}`, {
      hydrate: () => this.hydrate(runId),
      receive: (state, message) => this.receive(runId, state, message),
      passivateAfterMs: PASSIVATE_AFTER_MS,
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
      // Folded ahead of an append the log could not take or refused as stale: folded again from the
      // log, quietly (no crash to report: the asker was told, and sends the input again).
      if (error instanceof LogUnwritableError || error instanceof StaleVersionError) return this.hydrate(runId);
      throw error;
    }
  }
}
