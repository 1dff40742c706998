import { asInputOf, type Decider } from '../../actors/decider.ts';
import { decideStep } from '../../actors/decideStep.ts';
import type { EventOf, NewDomainEvent } from '../../events/catalog.ts';
import type { NewEvent, StoredEvent } from '../../events/envelope.ts';
import type { EventStore, StaleVersionError } from '../store/eventStore.ts';

/** A new event of one of the types `E` as the log holds it once committed. */
export type Recorded<E extends NewDomainEvent> = EventOf<E['type']>;

/** What one step of a deciding actor came to: the input `I` and decisions `D` as committed, or the conflict. */
export type StepOutcome<S, I extends NewDomainEvent = NewDomainEvent, D extends NewDomainEvent = NewDomainEvent> =
  | {
      readonly ok: true;
      readonly state: S;
      readonly input: Recorded<I> | null;
      readonly decisions: readonly Recorded<D>[];
      /** An ignored input's answer, decided and not recorded (see `Decider.unrecorded`). */
      readonly unrecorded?: readonly D[];
    }
  | { readonly ok: false; readonly conflict: StaleVersionError };

/** An input decided, and the append that records it: what every deciding actor hands the store. */
export interface DecidedAppend<S, I extends NewDomainEvent = NewDomainEvent, D extends NewDomainEvent = NewDomainEvent> {
  /** Folded ahead of the commit: the input, its answers and the follow-ups. */
  readonly state: S;
  /** The input's direct answers, then the follow-ups: what a caller may read before it appends. */
  readonly decisions: readonly D[];
  readonly expected: Record<string, number>;
  /** The input, then each decision, caused by it. */
  readonly events: readonly [I, ...NewEvent[]];
}

/** The version of a stream this actor has not written yet (it only reads the log). */
export type VersionOf = (stream: string) => Promise<number>;

/**
 * The `versionOf` of a writer that read every stream it writes, so each is in `versions` (a lane's
 * adoption round, an inbox, a session): a decision on another stream is a bug of its decider, refused
 * before anything is appended instead of expected at some version nobody read.
 */
export const onlyStreamsRead: VersionOf = async (stream) => {
  throw new Error(`a decision on ${stream}, a stream this writer did not read: nothing was appended`);
};

/**
 * The store answers the events of an append in the order it was given them, each as its input was:
 * the one place that knows the input and decisions it recorded are those it was handed.
 */
export function recorded<I extends NewDomainEvent, D extends NewDomainEvent>(
  events: readonly StoredEvent[],
): { readonly input: Recorded<I>; readonly decisions: readonly Recorded<D>[] } {
  const [input, ...decisions] = events as readonly [Recorded<I>, ...Recorded<D>[]];
  return { input, decisions };
}

/**
 * The one decide half of every actor's step, whether it waits for the commit (`decideAndAppend`) or
 * not (the pipelining DecidingActor): decide from the state and the input, fold the answers, ask for
 * follow-ups (decideStep), and build the append of the input and every decision, each stream at the
 * version this actor last saw (`versions`, filled from `versionOf` for a stream it has not seen).
 * Null for an input the decider ignores: it is neither decided nor recorded; an event that is no input
 * of it is refused with an error that names both.
 */
export async function decideAppend<S, I extends NewDomainEvent, D extends NewDomainEvent>(
  decider: Decider<S, I, D>,
  state: S,
  input: NoInfer<I>,
  versions: Map<string, number>,
  versionOf: VersionOf,
): Promise<DecidedAppend<S, I, D> | null> {
  // The types keep other deciders' events out; this keeps out one from an untyped caller, which the
  // decider would answer with nothing and the log would record as if it had been decided.
  const step = decideStep(decider, state, asInputOf(decider, input));
  if (!step) return null;
  const events: [I, ...NewEvent[]] = [input, ...step.decisions.map((d) => ({ ...d, cause: { inBatch: 0 } }))];
  return { state: step.state, decisions: step.decisions, expected: await expectedOf(events, versions, versionOf), events };
}

/** Each stream of an append at the version this actor last saw it (`versions`, filled from `versionOf` for one it has not). */
async function expectedOf(events: readonly NewEvent[], versions: Map<string, number>, versionOf: VersionOf): Promise<Record<string, number>> {
  const expected: Record<string, number> = {};
  for (const { stream } of events) {
    if (Object.hasOwn(expected, stream)) continue;
    if (!versions.has(stream)) versions.set(stream, await versionOf(stream));
    expected[stream] = versions.get(stream)!;
  }
  return expected;
}

/**
 * One step of an actor: decide (`decideAppend`), then append the input and every decision in one
 * transaction and wait for the commit. The state is folded ahead of the commit (a follow-up is decided
 * from it), so after a refused append the caller must rehydrate it from the log and decide again (see
 * retryOnConflict): the returned conflict says so. An input the decider ignores is neither decided nor
 * recorded. `versionOf` is required: a stream missing from `versions` is read from the log (the
 * store's `streamVersion`) or known to the caller, never assumed new, which would make the first
 * append to a written stream a conflict, or hide where its version was meant to come from.
 */
export async function decideAndAppend<S, I extends NewDomainEvent, D extends NewDomainEvent>(
  store: EventStore,
  decider: Decider<S, I, D>,
  state: S,
  input: NoInfer<I>,
  versions: Map<string, number>,
  versionOf: VersionOf,
  /** The input is another actor's committed decision (see `decideMessageAppend`): only its decisions are appended. */
  message = false,
): Promise<StepOutcome<S, I, D>> {
  if (message) {
    const recordedMessage = input as unknown as Recorded<I>;
    const decided = await decideMessageAppend(decider, state, recordedMessage, versions, versionOf);
    if (!decided) return { ok: true, state, input: null, decisions: [] };
    const result = await commit(store, decided, versions);
    return result.ok ? { ok: true, state: decided.state, input: recordedMessage, decisions: result.events as readonly Recorded<D>[] } : result;
  }
  const decided = await decideAppend(decider, state, input, versions, versionOf);
  if (!decided) return { ok: true, state, input: null, decisions: [] };
  const result = await commit(store, decided, versions);
  return result.ok ? { ok: true, state: decided.state, ...recorded<I, D>(result.events) } : result;
}

/** Appends what was decided and waits for the commit; each stream's version moves on with it. */
async function commit(
  store: EventStore,
  decided: { readonly expected: Record<string, number>; readonly events: readonly NewEvent[] },
  versions: Map<string, number>,
) {
  const result = await store.append({ expected: decided.expected, events: decided.events });
  if (result.ok) for (const event of result.events) versions.set(event.stream, event.version);
  return result;
}

/** A message decided (see `Decider.messageScopeOf`): only its decisions are appended, each caused by the message. */
export interface DecidedMessage<S, D extends NewDomainEvent = NewDomainEvent> {
  readonly state: S;
  readonly decisions: readonly D[];
  readonly expected: Record<string, number>;
  readonly events: readonly NewEvent[];
}

/**
 * The decide half of a step whose input is another actor's committed decision (a message): decided as
 * an input is (decideStep), but the message is not folded into this state (it is in none of its
 * streams) and not appended again; the append holds the decisions, each with the message's seq as
 * its cause. Null when the decider ignores it or decides nothing: nothing is appended.
 */
export async function decideMessageAppend<S, I extends NewDomainEvent, D extends NewDomainEvent>(
  decider: Decider<S, I, D>,
  state: S,
  message: Recorded<I>,
  versions: Map<string, number>,
  versionOf: VersionOf,
): Promise<DecidedMessage<S, D> | null> {
  if (decider.messageScopeOf?.(message) == null)
    throw new Error(`${message.type} at seq ${message.seq} is not a message the ${decider.name} decider takes`);
  const step = decideStep(decider, state, message as unknown as I, true);
  if (!step || step.decisions.length === 0) return null;
  const events = step.decisions.map((d) => ({ ...d, cause: message.seq }));
  return { state: step.state, decisions: step.decisions, expected: await expectedOf(events, versions, versionOf), events };
}
