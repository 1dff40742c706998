import type { AnyDecider, InputRecall } from '../actors/decider.ts';
import type { DomainEvent, NewDomainEvent } from '../events/catalog.ts';
import { type DecisionView, sameDecision, view, whereTheyDiffer } from './compare.ts';
import type { ScopedStates } from './deciderStates.ts';

/**
 * - `differs`: a recorded decision is not the one re-derived (`seq` is the recorded one);
 * - `missing`: the decider now decides more than was recorded (`seq` is the input's);
 * - `extra`: more was recorded than the decider now decides (`seq` is the first extra one);
 * - `ignored`: an input was recorded that the decider ignores in that state, and an ignored input
 *   is never recorded (`seq` is the input's);
 * - `orphan`: a decision whose cause is not the input its append began with (`seq` is its own).
 */
export type DifferenceKind = 'differs' | 'missing' | 'extra' | 'ignored' | 'orphan';

export interface ReplayDifference {
  readonly seq: number;
  readonly kind: DifferenceKind;
  /** The input the decisions answer; for an orphan, the orphan itself. */
  readonly input: DomainEvent;
  /** The decider that re-decided the input, `?` for an orphan. */
  readonly decider: string;
  readonly scope: string | null;
  readonly recorded: DecisionView[];
  readonly rederived: DecisionView[];
  /** Which decision (0-based) is the first that differs; -1 when the difference is not one decision's. */
  readonly index: number;
  /** Where they differ, in one line. */
  readonly detail: string;
}

/** One input re-decided: what was recorded, what the decider decides now. */
export interface ReplayStep {
  readonly input: DomainEvent;
  readonly decider: string;
  readonly scope: string;
  readonly recorded: readonly DomainEvent[];
  readonly rederived: readonly NewDomainEvent[];
  readonly difference: ReplayDifference | null;
}

/** One decider in a replay: its states, from which seq it folds, which scopes it keeps. */
export interface Lane {
  readonly decider: AnyDecider;
  readonly retire: (state: unknown) => unknown;
  states: ScopedStates;
  /** The last seq folded into `states` before this replay began. */
  from: number;
  scopes: ReadonlySet<string> | null;
  /** What this replay keeps of the log for the decider's older inputs (see InputRecall), if it has any. */
  readonly recall: InputRecall<unknown, NewDomainEvent> | null;
}

/** An input re-decided, its recorded decisions still coming in. */
export interface OpenInput {
  readonly input: DomainEvent;
  readonly lane: Lane;
  readonly scope: string;
  readonly rederived: NewDomainEvent[];
  readonly recorded: DomainEvent[];
  /** How many of the re-derived decisions answer the input directly; `react` follows them. */
  readonly answers: number;
  reacted: boolean;
  ignored: boolean;
  /** A recorded decision was found to differ from its re-derived one as it came in. */
  differs: boolean;
  /** The first recorded decision equal to its re-derived one on what it decides, but that does not read as its type. */
  unreadable: { readonly index: number; readonly problem: string } | null;
}

/** What differs between the decisions recorded for an input and those re-derived from it, if anything. */
export function compare(open: OpenInput): ReplayDifference | null {
  const { recorded, rederived } = open;
  const decider = open.lane.decider.name;
  if (open.ignored) {
    return {
      seq: open.input.seq,
      kind: 'ignored',
      input: open.input,
      decider,
      scope: open.scope,
      recorded: recorded.map(view),
      rederived: rederived.map(view),
      index: -1,
      detail: `the ${decider} decider ignores this input in the state it was recorded in, and an ignored input is never recorded`,
    };
  }
  const count = Math.max(recorded.length, rederived.length);
  for (let i = 0; i < count; i++) {
    const a = recorded[i];
    const b = rederived[i];
    const unreadable = open.unreadable?.index === i ? open.unreadable : null;
    if (a && b && !unreadable && sameDecision(a, b)) continue;
    const views = { recorded: recorded.map(view), rederived: rederived.map(view) };
    const kind: DifferenceKind = a && b ? 'differs' : a ? 'extra' : 'missing';
    return {
      seq: a?.seq ?? open.input.seq,
      kind,
      input: open.input,
      decider,
      scope: open.scope,
      ...views,
      index: i,
      detail: unreadable ? `data: does not read as ${a!.type} (${unreadable.problem})` : whereTheyDiffer(views.recorded[i], views.rederived[i]),
    };
  }
  return null;
}
