import type { NewDomainEvent } from '../events/catalog.ts';
import { provisional } from '../events/provisional.ts';
import type { Decider } from './decider.ts';

export interface Step<S, D extends NewDomainEvent = NewDomainEvent> {
  readonly state: S;
  /** The input's direct answers, then the follow-ups the new state called for. */
  readonly decisions: readonly D[];
}

/**
 * One input through a decider, in memory: decide, fold the input and the answers, ask for
 * follow-ups, fold those. Null when the decider ignores the input. `state` is folded in place.
 * Typed by the decider's own inputs `I` and decisions `D`: it takes no other decider's input.
 */
export function decideStep<S, I extends NewDomainEvent, D extends NewDomainEvent>(
  decider: Decider<S, I, D>,
  state: S,
  input: I,
  /** The input is another actor's committed decision (see `Decider.messageScopeOf`): it is not folded here. */
  message = false,
): Step<S, D> | null {
  if (decider.ignores?.(state, input)) return null;
  const answers = decider.decide(state, input);
  let next = message ? state : decider.evolve(state, provisional(input));
  for (const answer of answers) next = decider.evolve(next, provisional(answer));
  const followUps = decider.react?.(next, input) ?? [];
  for (const followUp of followUps) next = decider.evolve(next, provisional(followUp));
  return { state: next, decisions: [...answers, ...followUps] };
}
