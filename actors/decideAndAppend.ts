import type { DomainEvent, NewDomainEvent } from '../events/catalog.ts';
import type { EventStore, StaleVersionError } from '../events/store/eventStore.ts';
import type { Decider } from './decider.ts';

export type StepOutcome<S> =
  | { readonly ok: true; readonly state: S; readonly input: DomainEvent; readonly decisions: readonly DomainEvent[] }
  | { readonly ok: false; readonly conflict: StaleVersionError };

/**
 * One step of an actor: decide from the state and the input, then append the input and its decisions
 * in one transaction (each decision's `cause` is the input), each stream at the version this actor
 * last saw. Only after the commit is the state evolved: a refused append leaves it untouched, and the
 * actor rehydrates from the log before it tries again.
 */
export async function decideAndAppend<S>(
  store: EventStore,
  decider: Decider<S>,
  state: S,
  input: NewDomainEvent,
  versions: Map<string, number>,
): Promise<StepOutcome<S>> {
  const decisions = decider.decide(state, input);
  const events = [input, ...decisions.map((d) => ({ ...d, cause: { inBatch: 0 } }))];
  const expected: Record<string, number> = {};
  for (const event of events) expected[event.stream] = versions.get(event.stream) ?? 0;
  const result = await store.append({ expected, events });
  if (!result.ok) return result;
  let next = state;
  for (const event of result.events) {
    versions.set(event.stream, event.version);
    next = decider.evolve(next, event as DomainEvent);
  }
  const [recordedInput, ...recordedDecisions] = result.events as DomainEvent[];
  return { ok: true, state: next, input: recordedInput!, decisions: recordedDecisions };
}
