import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import type { NewEvent } from '../../events/envelope.ts';
import type { EventStore, StaleVersionError } from '../../events/store/eventStore.ts';
import type { Decider } from './decider.ts';
import { decideStep } from './decideStep.ts';

export type StepOutcome<S> =
  | { readonly ok: true; readonly state: S; readonly input: DomainEvent | null; readonly decisions: readonly DomainEvent[] }
  | { readonly ok: false; readonly conflict: StaleVersionError };

/**
 * One step of an actor: decide from the state and the input, fold the answers, ask for follow-ups,
 * then append the input and every decision in one transaction (each decision's `cause` is the
 * input), each stream at the version this actor last saw. The state is folded ahead of the commit
 * (a follow-up is decided from it), so after a refused append the caller must rehydrate it from the
 * log: the returned conflict says so. An input the decider ignores is neither decided nor recorded.
 */
export async function decideAndAppend<S>(
  store: EventStore,
  decider: Decider<S>,
  state: S,
  input: NewDomainEvent,
  versions: Map<string, number>,
  /** The version of a stream this actor has not written yet (it only reads the log). */
  versionOf: (stream: string) => Promise<number> = async () => 0,
): Promise<StepOutcome<S>> {
  const step = decideStep(decider, state, input);
  if (!step) return { ok: true, state, input: null, decisions: [] };
  const events: NewEvent[] = [input, ...step.decisions.map((d) => ({ ...d, cause: { inBatch: 0 } }))];
  const expected: Record<string, number> = {};
  for (const event of events) {
    if (!versions.has(event.stream)) versions.set(event.stream, await versionOf(event.stream));
    expected[event.stream] = versions.get(event.stream)!;
  }
  const result = await store.append({ expected, events });
  if (!result.ok) return result;
  for (const event of result.events) versions.set(event.stream, event.version);
  const [recordedInput, ...recordedDecisions] = result.events as DomainEvent[];
  return { ok: true, state: step.state, input: recordedInput!, decisions: recordedDecisions };
}
