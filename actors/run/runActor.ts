import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import type { EventStore } from '../../events/store/eventStore.ts';
import { type StepOutcome, decideAndAppend } from '../decideAndAppend.ts';
import { type ActorSystem, type ReplyTo, child, query, reply } from '../runtime.ts';
import { runDecider } from './runDecider.ts';
import type { RunExecution } from './runState.ts';

type Message = { readonly input: NewDomainEvent; readonly replyTo: ReplyTo<StepOutcome<RunExecution> | Error> };

interface RunActorState {
  run: RunExecution;
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
  ) {}

  async input(runId: string, input: NewDomainEvent): Promise<StepOutcome<RunExecution>> {
    const ref = child<RunActorState, Message>(this.system, `run-${this.computer}-${runId}`, {
      hydrate: () => this.hydrate(runId),
      receive: (state, message) => this.receive(runId, state, message),
      passivateAfterMs: PASSIVATE_AFTER_MS,
    });
    const outcome = await query(ref, (replyTo) => ({ input, replyTo }), QUERY_TIMEOUT_MS);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  private async hydrate(runId: string): Promise<RunActorState> {
    const stream = `${this.computer}/run:${runId}`;
    let run = runDecider.initialState(stream);
    const versions = new Map<string, number>();
    for (const event of await this.store.readStream(stream)) {
      run = runDecider.evolve(run, event);
      versions.set(stream, event.version);
    }
    return { run, versions };
  }

  private async receive(runId: string, state: RunActorState, message: Message): Promise<RunActorState> {
    let outcome: StepOutcome<RunExecution>;
    try {
      outcome = await decideAndAppend(this.store, runDecider, state.run, message.input, state.versions, (s) => this.store.streamVersion(s));
    } catch (error) {
      reply(message.replyTo, error as Error);
      throw error;
    }
    reply(message.replyTo, outcome.ok ? outcome : outcome.conflict);
    // A refused append leaves a state folded ahead of the log: reset and rehydrate.
    if (!outcome.ok) throw outcome.conflict;
    state.run = outcome.state;
    if (outcome.decisions.length) this.afterCommit(runId, state.run, outcome.decisions);
    return state;
  }
}
