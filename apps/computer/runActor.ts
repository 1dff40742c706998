import type { RunDecision, RunInput } from '../../actors/run/decideRun.ts';
import { runDecider } from '../../actors/run/runDecider.ts';
import type { RunExecution } from '../../actors/run/runState.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { type Clock, systemClock } from '../../runtime/actors/clock.ts';
import type { StepOutcome } from '../../runtime/actors/decideAndAppend.ts';
import { retryOnConflict } from '../../runtime/actors/retryOnConflict.ts';
import { type ActorRef, ActorStoppedError, type ActorSystem, child, query, type ReplyTo, reply, stop } from '../../runtime/actors/runtime.ts';
import { stepInActor } from '../../runtime/actors/stepInActor.ts';
import { type InputOptions, recordedUnlessFailFast } from '../../runtime/actors/untilRecorded.ts';
import { type EventStore, StaleVersionError } from '../../runtime/store/eventStore.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';

type RunOutcome = StepOutcome<RunExecution, RunInput, RunDecision>;
/** `message`: the input is its queue's committed decision (`run.claimed`), not appended again. */
type Message = { readonly input: RunInput; readonly message?: boolean; readonly replyTo: ReplyTo<RunOutcome | Error> };

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

  /** Inputs sent to each run's actor and not yet answered. */
  private readonly asking = new Map<string, number>();
  /** Runs whose actor last decided them settled: retired once nothing more is asked of them. */
  private readonly settled = new Set<string>();

  /**
   * Every input of a run is a fact of the world (an agent's exit, a board's answer, a timer): one refused
   * as stale is decided again (retryOnConflict), each time on the state the reset actor folds anew from
   * the log, and one the log cannot take, or still refused after those retries, is sent again until it
   * is recorded (untilRecorded), unless `failFast`.
   */
  input(runId: string, input: RunInput, options: InputOptions = {}): Promise<RunOutcome> {
    return this.ask(runId, input, false, options);
  }

  /**
   * Its queue's committed decision that starts the run (`run.claimed`, see `Decider.messageScopeOf`):
   * decided as an input is, retried the same way, but only the decisions are appended, caused by it.
   */
  message(runId: string, claimed: Extract<DomainEvent, { type: 'run.claimed' }>, options: InputOptions = {}): Promise<RunOutcome> {
    return this.ask(runId, claimed, true, options);
  }

  private ask(runId: string, input: RunInput, message: boolean, options: InputOptions): Promise<RunOutcome> {
    return recordedUnlessFailFast(this.clock, options, () =>
      retryOnConflict(async () => {
        this.asking.set(runId, (this.asking.get(runId) ?? 0) + 1);
        try {
          const outcome = await query(this.ref(runId), (replyTo) => ({ input, message, replyTo }), QUERY_TIMEOUT_MS);
          if (outcome instanceof StaleVersionError) return outcome;
          if (outcome instanceof Error) throw outcome;
          return outcome;
        } finally {
          this.answered(runId);
        }
      }),
    );
  }

  /**
   * A settled run's actor leaves memory once nothing more is asked of it, rather than after its
   * passivation: a daemon handling thousands of runs an hour would hold every one of the last ten
   * minutes' (their state and their timer). Every message reaches it through `input`, so with none
   * outstanding its mailbox is empty; a late input spawns it again, hydrated from the run's stream.
   */
  private answered(runId: string): void {
    const left = (this.asking.get(runId) ?? 1) - 1;
    if (left > 0) {
      this.asking.set(runId, left);
      return;
    }
    this.asking.delete(runId);
    if (!this.settled.has(runId)) return;
    // After the actor's receive has returned (the reply is sent from inside it).
    setImmediate(() => {
      if (this.asking.has(runId) || !this.settled.delete(runId)) return;
      try {
        this.stop(runId);
      } catch (error) {
        // The daemon stopped meanwhile, and its actors with it.
        if (!(error instanceof ActorStoppedError)) throw error;
      }
    });
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
      // Its stream could not be read: the asker hears why now (and retries, see `input`), not at its query's timeout.
      hydrateFailed: (message, error) => reply(message.replyTo, error instanceof Error ? error : new Error(String(error))),
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
      const outcome = await stepInActor(this.store, runDecider, state, message.input, message.replyTo, message.message === true);
      if (outcome.decisions.length) this.afterCommit(runId, state.state, outcome.decisions);
      if (state.state.phase === 'settled') this.settled.add(runId);
      else this.settled.delete(runId);
      return state;
    } catch (error) {
      // Folded ahead of an append the log could not take or refused as stale: folded again from the
      // log, quietly (no crash to report: the asker was told, and sends the input again).
      if (error instanceof LogUnwritableError || error instanceof StaleVersionError) return this.hydrate(runId);
      throw error;
    }
  }
}
