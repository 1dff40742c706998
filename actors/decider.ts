import type { DomainEvent, NewDomainEvent } from '../events/catalog.ts';

/**
 * The pure heart of an actor. `decide` reads the state and the input (its `at` is the time) and
 * returns the decisions; `evolve` folds any event, input or decision, into the state. Neither does
 * I/O, reads the wall clock or draws a random number, so `replay` can re-derive every decision.
 * `evolve` may update the state in place (see Projection); `decide` must not touch it.
 *
 * `I` are the inputs it takes (the types listed in `inputs`) and `D` the decisions it may answer
 * with: a decision of another type, or a `case` for a type that is not an input, does not compile.
 * The defaults let code that runs any decider (the runtime, replay) take it as `Decider<S>`.
 */
export interface Decider<S, I extends NewDomainEvent = NewDomainEvent, D extends NewDomainEvent = NewDomainEvent> {
  readonly name: string;
  /**
   * The types of the events this decider answers with decisions; the others it only folds. Declared
   * `[...] as const satisfies readonly EventType[]`, and `I` is derived from it (`NewEventOf<(typeof X)[number]>`).
   */
  readonly inputs: readonly I['type'][];
  /** Which state an event belongs to (one per lane, say), or null when this decider ignores it. */
  scopeOf(event: Pick<DomainEvent, 'stream' | 'type'>): string | null;
  /** Whether the event's type is one of `inputs` (built from them by `decider`). */
  isInput(event: Pick<DomainEvent, 'type'>): boolean;
  /**
   * Another actor's committed decisions this decider takes as its input (docs/rules.md#actors: actors talk by the
   * log): already in the log, they are not appended again; the decisions taken from one are appended
   * on their own, each with that decision's seq as its `cause`, and it is not folded into this state
   * (it is in none of its streams). Null for an event that is none of its messages: another type, or
   * an older shape that lacks what it decides from (its older input, recorded then, is decided instead).
   */
  messageScopeOf?(event: DomainEvent): string | null;
  /** The types `messageScopeOf` may answer for (the others it never takes): what a replay reads the data of. */
  readonly messages?: readonly I['type'][];
  initialState(scope: string): S;
  decide(state: S, input: I): D[];
  /**
   * Follow-up decisions the new state calls for, asked once the input and `decide`'s answers are
   * folded (a freed slot starts the next run). They share the input as cause and its transaction.
   * Two steps instead of one, so that `decide` never has to copy a large state to look ahead.
   */
  react?(state: S, input: I): D[];
  /**
   * True for an input that would change nothing (a timer that fires late or twice): it is then
   * neither recorded nor decided, so the log grows with decisions, not with time.
   */
  ignores?(state: S, input: I): boolean;
  /**
   * The answer to an input it ignores that still wants one (a claim that lost to another computer's):
   * decided like any, on the same state, and never recorded, for it changes nothing. Empty for the others.
   */
  unrecorded?(state: S, input: I): D[];
  evolve(state: S, event: DomainEvent): S;
  /**
   * Replay only, for logs of older versions: a fresh recall (one per replay) that upcasts an input
   * recorded without something a newer host reads from the log and records on it (see InputRecall).
   */
  recall?(): InputRecall<S, I>;
}

/**
 * What a replay keeps of the log to give an older input what the host now records on it, as the host
 * would have read it then: `note` sees every event of the decider's scopes in log order (the input's
 * own decisions too, after it), `fill` the input at `seq` before it is decided, from what was noted
 * before `seq`. An input that already has it is given back as it is.
 */
export interface InputRecall<S, I> {
  note(event: DomainEvent): void;
  fill(state: S, input: I, seq: number): I;
}

/** A decider as written: everything but `isInput`, which `decider` derives from `inputs`. */
export type DeciderSpec<S, I extends NewDomainEvent, D extends NewDomainEvent> = Omit<Decider<S, I, D>, 'isInput'>;

/** Builds a decider whose `isInput` answers from its `inputs`: the one place that test is written. */
export function decider<S, I extends NewDomainEvent, D extends NewDomainEvent>(spec: DeciderSpec<S, I, D>): Decider<S, I, D> {
  const inputs = new Set<string>(spec.inputs);
  return { ...spec, isInput: (event) => inputs.has(event.type) };
}

/**
 * The event as an input of `decider`, checked where a caller typed only by `NewDomainEvent` hands one
 * over: another decider's event would be decided as nothing, so it is an error that names both.
 */
export function asInputOf<S, I extends NewDomainEvent, D extends NewDomainEvent>(decider: Decider<S, I, D>, event: NewDomainEvent): I {
  if (!decider.isInput(event)) throw new Error(`${event.type} on ${event.stream} is not an input of the ${decider.name} decider`);
  return event as I;
}

/**
 * A decider of any state, inputs and decisions, as a registry holds them. `any`, not `unknown`: a
 * `Decider<BoardState, BoardInput, …>` takes a `BoardState` and only its own inputs, so it is no
 * `Decider<unknown>`; TypeScript has no "some S, I, D" to say it is one of each. Whoever runs one
 * from a registry keeps its states apart (one map per decider) and hands it only what its `isInput` takes.
 */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds deciders of every state, input and decision type (above)
export type AnyDecider = Decider<any, any, any>;
