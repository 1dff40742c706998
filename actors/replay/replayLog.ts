import { isDeepStrictEqual } from 'node:util';
import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import type { EventStore } from '../../events/store/eventStore.ts';
import { foldLog } from '../../projections/foldLog.ts';
import type { AnyDecider } from '../decider.ts';

/** A decision as compared: what was decided, about which stream, at what time. */
export interface DecisionView {
  readonly seq?: number;
  readonly stream: string;
  readonly type: string;
  readonly data: unknown;
  readonly at: number;
}

export interface ReplayDifference {
  /** The first recorded decision that differs, or the input's seq when a decision is missing. */
  readonly seq: number;
  readonly input: DomainEvent;
  readonly decider: string;
  readonly recorded: DecisionView[];
  readonly rederived: DecisionView[];
}

export type ReplayReport =
  | { readonly ok: true; readonly inputs: number; readonly decisions: number; readonly lastSeq: number }
  | ({ readonly ok: false } & ReplayDifference);

interface OpenInput {
  readonly input: DomainEvent;
  readonly decider: AnyDecider;
  readonly scope: string;
  readonly rederived: DecisionView[];
  readonly recorded: DomainEvent[];
  /** How many of the recorded decisions answer the input directly; `react` follows them. */
  readonly answers: number;
  reacted: boolean;
}

/**
 * Re-runs the registered deciders over the recorded inputs, in log order, each against the state
 * folded from the recorded events before it, and compares every re-derived decision with the one
 * recorded (the events whose `cause` is that input, which follow it in the same append).
 */
export async function replayLog(
  store: Pick<EventStore, 'readAll'>,
  deciders: readonly AnyDecider[],
  options: { until?: number; onPage?: (seq: number) => void } = {},
): Promise<ReplayReport> {
  const states = new Map<AnyDecider, Map<string, unknown>>(deciders.map((d) => [d, new Map()]));
  let open: OpenInput | null = null;
  let difference: ReplayDifference | null = null;
  let inputs = 0;
  let decisions = 0;

  const stateOf = (decider: AnyDecider, scope: string): unknown => {
    const scoped = states.get(decider)!;
    if (!scoped.has(scope)) scoped.set(scope, decider.initialState(scope));
    return scoped.get(scope);
  };
  const fold = (event: DomainEvent): void => {
    for (const decider of deciders) {
      const scope = decider.scopeOf(event);
      if (scope !== null) states.get(decider)!.set(scope, decider.evolve(stateOf(decider, scope), event));
    }
  };
  // Once the input's direct answers are folded, its follow-ups are decided from that state.
  const reactIfDue = (current: OpenInput): void => {
    if (current.reacted || current.recorded.length < current.answers) return;
    current.reacted = true;
    const followUps = current.decider.react?.(stateOf(current.decider, current.scope), current.input as NewDomainEvent) ?? [];
    current.rederived.push(...followUps.map(view));
  };
  const close = (): void => {
    if (!open || difference) return;
    reactIfDue(open);
    difference = compare(open);
    open = null;
  };

  const lastSeq = await foldLog(
    store,
    0,
    (event) => {
      if (difference) return;
      if (event.cause !== null) {
        if (!open || event.cause !== open.input.seq) {
          close();
          difference ??= { seq: event.seq, input: event, decider: '?', recorded: [view(event)], rederived: [] };
          return;
        }
        open.recorded.push(event);
        decisions++;
        fold(event);
        reactIfDue(open);
        return;
      }
      close();
      const decider = deciders.find((d) => d.isInput(event) && d.scopeOf(event) !== null);
      if (!decider) {
        fold(event);
        return;
      }
      inputs++;
      const scope = decider.scopeOf(event)!;
      const answers = decider.decide(stateOf(decider, scope), event as NewDomainEvent).map(view);
      open = { input: event, decider, scope, rederived: answers, recorded: [], answers: answers.length, reacted: false };
      fold(event);
      reactIfDue(open);
    },
    { ...(options.until === undefined ? {} : { until: options.until }), ...(options.onPage ? { onPage: options.onPage } : {}) },
  );
  // `until` may fall inside an append: the rest of its input's decisions lie past it and are compared
  // too, or a cut decision would read as a missing one.
  const cut = open as OpenInput | null;
  if (options.until !== undefined && cut && !difference) {
    for (let after = lastSeq, more = true; more; ) {
      const page = await store.readAll(after, 100);
      more = page.length === 100;
      for (const event of page) {
        if (event.cause !== cut.input.seq) {
          more = false;
          break;
        }
        cut.recorded.push(event);
        decisions++;
        fold(event);
        reactIfDue(cut);
        after = event.seq;
      }
    }
  }
  close();
  const found = difference as ReplayDifference | null;
  return found ? { ok: false, ...found } : { ok: true, inputs, decisions, lastSeq };
}

function compare(open: OpenInput): ReplayDifference | null {
  const recorded = open.recorded.map(view);
  const count = Math.max(recorded.length, open.rederived.length);
  for (let i = 0; i < count; i++) {
    const a = recorded[i];
    const b = open.rederived[i];
    if (a && b && sameDecision(a, b)) continue;
    return { seq: a?.seq ?? open.input.seq, input: open.input, decider: open.decider.name, recorded, rederived: open.rederived };
  }
  return null;
}

function sameDecision(a: DecisionView, b: DecisionView): boolean {
  return a.stream === b.stream && a.type === b.type && a.at === b.at && isDeepStrictEqual(jsonOf(a.data), jsonOf(b.data));
}

/** Data as the log holds it: a decided `undefined` field is absent once written. */
function jsonOf(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

function view(event: NewDomainEvent | DomainEvent): DecisionView {
  return { ...('seq' in event ? { seq: event.seq } : {}), stream: event.stream, type: event.type, data: event.data, at: event.at };
}
