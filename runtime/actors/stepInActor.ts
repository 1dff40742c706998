import type { Decider } from '../../actors/decider.ts';
import type { NewDomainEvent } from '../../events/catalog.ts';
import type { EventStore } from '../store/eventStore.ts';
import { decideAndAppend, type StepOutcome } from './decideAndAppend.ts';
import { type ReplyTo, reply } from './runtime.ts';

export type Committed<S, I extends NewDomainEvent = NewDomainEvent, D extends NewDomainEvent = NewDomainEvent> = Extract<
  StepOutcome<S, I, D>,
  { ok: true }
>;

/**
 * What every deciding actor does with an input inside its mailbox: decide and append, answer the
 * asker (the outcome, or the error), and throw on a refused append — the state was folded ahead of
 * the commit, so the actor's crash policy resets it and it rehydrates from the log.
 */
export async function stepInActor<S, I extends NewDomainEvent, D extends NewDomainEvent>(
  store: EventStore,
  decider: Decider<S, I, D>,
  held: { state: S; readonly versions: Map<string, number> },
  input: NoInfer<I>,
  replyTo: ReplyTo<StepOutcome<S, I, D> | Error>,
  /** The input is another actor's committed decision, already in the log (see `Decider.messageScopeOf`). */
  message = false,
): Promise<Committed<S, I, D>> {
  let outcome: StepOutcome<S, I, D>;
  const versionOf = (stream: string) => store.streamVersion(stream);
  try {
    outcome = await decideAndAppend(store, decider, held.state, input, held.versions, versionOf, message);
  } catch (error) {
    reply(replyTo, error as Error);
    throw error;
  }
  reply(replyTo, outcome.ok ? outcome : outcome.conflict);
  if (!outcome.ok) throw outcome.conflict;
  held.state = outcome.state;
  return outcome;
}
