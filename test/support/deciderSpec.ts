import type { Decider } from '../../actors/runtime/decider.ts';
import { decideStep } from '../../actors/runtime/decideStep.ts';
import type { NewDomainEvent } from '../../events/catalog.ts';

/**
 * given / when / then for any decider: `given` inputs go through the whole step (decide, fold,
 * follow-ups), `when` returns the decisions of one more input (null when the decider ignores it, so
 * it would not even be recorded).
 */
export function deciderSpec<S>(decider: Decider<S>, initial: S, given: readonly NewDomainEvent[]) {
  let state = initial;
  const apply = (event: NewDomainEvent) => {
    const step = decideStep(decider, state, event);
    if (step) state = step.state;
    return step ? step.decisions : null;
  };
  for (const event of given) apply(event);
  return {
    when: (event: NewDomainEvent) => apply(event),
    get state() {
      return state;
    },
  };
}

/** One recorded step of a property test's history. */
export interface Recorded {
  readonly input: NewDomainEvent;
  readonly decisions: readonly NewDomainEvent[] | null;
}

/** Checks every step of a property test's history: throws, naming what broke, when a rule does. */
export interface StepModel<S> {
  observe(input: NewDomainEvent, decisions: readonly NewDomainEvent[] | null, state: S): void;
}

/**
 * A property test's history, built in memory: each input goes through the whole step, is recorded with
 * its decisions, and is checked by `model`; a broken rule fails with the input and the last steps.
 */
export function recordedHistory<S>(decider: Decider<S>, initial: S, model: StepModel<S>) {
  const history: Recorded[] = [];
  let state = initial;
  return {
    history,
    get state() {
      return state;
    },
    apply(input: NewDomainEvent): void {
      const step = decideStep(decider, state, input);
      if (step) state = step.state;
      history.push({ input, decisions: step?.decisions ?? null });
      try {
        model.observe(input, step?.decisions ?? null, state);
      } catch (error) {
        throw new Error(`${(error as Error).message}\n  after input #${history.length} ${show(input)}\n${trail(history)}`);
      }
    },
  };
}

export function show(event: NewDomainEvent): string {
  return `${event.type} ${event.stream} @${event.at} ${JSON.stringify(event.data)}`;
}

/** The last steps of a failing history, to read in the failure message. */
export function trail(history: readonly Recorded[]): string {
  return history
    .slice(-12)
    .map((r) => `  ${show(r.input)}\n${(r.decisions ?? []).map((d) => `    → ${d.type} ${JSON.stringify(d.data)}`).join('\n') || '    (ignored or nothing decided)'}`)
    .join('\n');
}

/** A value as the log holds it (undefined fields gone). */
export const json = <T>(value: T): T => JSON.parse(JSON.stringify(value));
