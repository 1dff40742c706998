import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import type { NewEvent } from '../../events/envelope.ts';
import type { EventStore, StaleVersionError } from '../../events/store/eventStore.ts';
import type { Decider } from './decider.ts';
import { decideStep } from './decideStep.ts';

export type StepOutcome<S> =
  | { readonly ok: true; readonly state: S; readonly input: DomainEvent | null; readonly decisions: readonly DomainEvent[] }
  | { readonly ok: false; readonly conflict: StaleVersionError };

/** An input decided, and the append that records it: what every deciding actor hands the store. */
export interface DecidedAppend<S> {
  /** Folded ahead of the commit: the input, its answers and the follow-ups. */
  readonly state: S;
  /** The input's direct answers, then the follow-ups: what a caller may read before it appends. */
  readonly decisions: readonly NewDomainEvent[];
  readonly expected: Record<string, number>;
  /** The input, then each decision, caused by it. */
  readonly events: readonly NewEvent[];
}

/** The version of a stream this actor has not written yet (it only reads the log). */
export type VersionOf = (stream: string) => Promise<number>;

/**
 * The one decide half of every actor's step, whether it waits for the commit (`decideAndAppend`) or
 * not (the pipelining DecidingActor): decide from the state and the input, fold the answers, ask for
 * follow-ups (decideStep), and build the append of the input and every decision, each stream at the
 * version this actor last saw (`versions`, filled from `versionOf` for a stream it has not seen).
 * Null for an input the decider ignores: it is neither decided nor recorded.
 */
export async function decideAppend<S>(
  decider: Decider<S>,
  state: S,
  input: NewDomainEvent,
  versions: Map<string, number>,
  versionOf: VersionOf,
): Promise<DecidedAppend<S> | null> {
  const step = decideStep(decider, state, input);
  if (!step) return null;
  const events: NewEvent[] = [input, ...step.decisions.map((d) => ({ ...d, cause: { inBatch: 0 } }))];
  const expected: Record<string, number> = {};
  for (const { stream } of events) {
    if (Object.hasOwn(expected, stream)) continue;
    if (!versions.has(stream)) versions.set(stream, await versionOf(stream));
    expected[stream] = versions.get(stream)!;
  }
  return { state: step.state, decisions: step.decisions, expected, events };
}

/**
 * One step of an actor: decide (`decideAppend`), then append the input and every decision in one
 * transaction and wait for the commit. The state is folded ahead of the commit (a follow-up is decided
 * from it), so after a refused append the caller must rehydrate it from the log and decide again (see
 * retryOnConflict): the returned conflict says so. An input the decider ignores is neither decided nor
 * recorded.
 */
export async function decideAndAppend<S>(
  store: EventStore,
  decider: Decider<S>,
  state: S,
  input: NewDomainEvent,
  versions: Map<string, number>,
  versionOf: VersionOf = async () => 0,
): Promise<StepOutcome<S>> {
  const decided = await decideAppend(decider, state, input, versions, versionOf);
  if (!decided) return { ok: true, state, input: null, decisions: [] };
  const result = await store.append({ expected: decided.expected, events: decided.events });
  if (!result.ok) return result;
  for (const event of result.events) versions.set(event.stream, event.version);
  const [recordedInput, ...recordedDecisions] = result.events as DomainEvent[];
  return { ok: true, state: decided.state, input: recordedInput!, decisions: recordedDecisions };
}
