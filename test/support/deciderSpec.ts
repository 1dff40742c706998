import type { Decider } from '../../actors/decider.ts';
import { asInputOf } from '../../actors/decider.ts';
import { decideStep, type Step } from '../../actors/decideStep.ts';
import type { NewDomainEvent } from '../../events/catalog.ts';
import { provisional } from '../../events/provisional.ts';
import { messageOf } from '../../events/thrown.ts';

/**
 * given / when / then for any decider: `given` inputs go through the whole step (decide, fold,
 * follow-ups), `when` returns the decisions of one more input (null when the decider ignores it, so
 * it would not even be recorded), typed as the decider's. A `given` may also be an event the decider
 * only folds (another decider's): it decides nothing from it, as when the runtime folds one.
 */
export function deciderSpec<S, I extends NewDomainEvent, D extends NewDomainEvent>(
  decider: Decider<S, I, D>,
  initial: NoInfer<S>,
  given: readonly NewDomainEvent[],
  /** The shell's part, when it records on an input what it read first: given the state and every decision so far. */
  shell?: (state: NoInfer<S>, event: NewDomainEvent, decided: readonly D[]) => NewDomainEvent,
) {
  let state = initial;
  const decided: D[] = [];
  const apply = (given: NewDomainEvent): readonly D[] | null => {
    const event = shell ? shell(state, given, decided) : given;
    const step = typedStep(decider, state, event);
    if (step) state = step.state;
    if (step && shell) decided.push(...step.decisions);
    return step ? step.decisions : null;
  };
  for (const event of given) apply(event);
  return {
    when: (event: NoInfer<I>) => apply(event),
    get state() {
      return state;
    },
  };
}

/**
 * `decideStep` for an input of the decider; another decider's event (a `given`) is only folded, as
 * the runtime folds it: it decides nothing.
 */
function typedStep<S, I extends NewDomainEvent, D extends NewDomainEvent>(
  decider: Decider<S, I, D>,
  state: S,
  event: NewDomainEvent,
): Step<S, D> | null {
  if (!decider.isInput(event)) return { state: decider.evolve(state, provisional(event)), decisions: [] };
  return decideStep(decider, state, asInputOf(decider, event));
}

/** The decisions of one type, typed by it (none for an ignored input). */
export function decisionsOf<E extends NewDomainEvent, T extends E['type']>(decisions: readonly E[] | null, type: T): Extract<E, { type: T }>[] {
  return (decisions ?? []).filter((d): d is Extract<E, { type: T }> => d.type === type);
}

/** The first decision of that type: a test that expects one fails, naming what was decided, when there is none. */
export function decisionOf<E extends NewDomainEvent, T extends E['type']>(decisions: readonly E[] | null, type: T): Extract<E, { type: T }> {
  const [first] = decisionsOf(decisions, type);
  if (!first) throw new Error(`no ${type} among the decisions: ${(decisions ?? []).map((d) => d.type).join(', ') || '(none)'}`);
  return first;
}

/** One recorded step of a property test's history. */
export interface Recorded<I extends NewDomainEvent = NewDomainEvent, D extends NewDomainEvent = NewDomainEvent> {
  readonly input: I;
  readonly decisions: readonly D[] | null;
}

/** Checks every step of a property test's history: throws, naming what broke, when a rule does. */
export interface StepModel<S, I extends NewDomainEvent = NewDomainEvent, D extends NewDomainEvent = NewDomainEvent> {
  observe(input: I, decisions: readonly D[] | null, state: S): void;
}

/**
 * A property test's history, built in memory: each input goes through the whole step, is recorded with
 * its decisions, and is checked by `model`; a broken rule fails with the input and the last steps.
 */
export function recordedHistory<S, I extends NewDomainEvent, D extends NewDomainEvent>(
  decider: Decider<S, I, D>,
  initial: NoInfer<S>,
  model: StepModel<NoInfer<S>, NoInfer<I>, NoInfer<D>>,
) {
  const history: Recorded<I, D>[] = [];
  let state = initial;
  return {
    history,
    get state() {
      return state;
    },
    apply(input: I): void {
      const step = typedStep(decider, state, input);
      if (step) state = step.state;
      history.push({ input, decisions: step?.decisions ?? null });
      try {
        model.observe(input, step?.decisions ?? null, state);
      } catch (error) {
        throw new Error(`${messageOf(error)}\n  after input #${history.length} ${show(input)}\n${trail(history)}`);
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
    .map(
      (r) =>
        `  ${show(r.input)}\n${(r.decisions ?? []).map((d) => `    → ${d.type} ${JSON.stringify(d.data)}`).join('\n') || '    (ignored or nothing decided)'}`,
    )
    .join('\n');
}

/** A value as the log holds it (undefined fields gone). */
export const json = <T>(value: T): T => JSON.parse(JSON.stringify(value));
