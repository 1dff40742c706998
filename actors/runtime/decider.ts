import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';

/**
 * The pure heart of an actor. `decide` reads the state and the input (its `at` is the time) and
 * returns the decisions; `evolve` folds any event, input or decision, into the state. Neither does
 * I/O, reads the wall clock or draws a random number, so `replay` can re-derive every decision.
 * `evolve` may update the state in place (see Projection); `decide` must not touch it.
 */
export interface Decider<S> {
  readonly name: string;
  /** Which state an event belongs to (one per lane, say), or null when this decider ignores it. */
  scopeOf(event: Pick<DomainEvent, 'stream' | 'type'>): string | null;
  /** The events this decider answers with decisions; the others it only folds. */
  isInput(event: Pick<DomainEvent, 'type'>): boolean;
  initialState(scope: string): S;
  decide(state: S, input: NewDomainEvent): NewDomainEvent[];
  /**
   * Follow-up decisions the new state calls for, asked once the input and `decide`'s answers are
   * folded (a freed slot starts the next run). They share the input as cause and its transaction.
   * Two steps instead of one, so that `decide` never has to copy a large state to look ahead.
   */
  react?(state: S, input: NewDomainEvent): NewDomainEvent[];
  /**
   * True for an input that would change nothing (a timer that fires late or twice): it is then
   * neither recorded nor decided, so the log grows with decisions, not with time.
   */
  ignores?(state: S, input: NewDomainEvent): boolean;
  evolve(state: S, event: DomainEvent): S;
}

// biome-ignore lint: a registry holds deciders of every state type
export type AnyDecider = Decider<any>;
