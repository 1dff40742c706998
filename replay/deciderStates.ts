import type { AnyDecider } from '../actors/decider.ts';
import type { RunExecution } from '../actors/run/runState.ts';
import type { DomainEvent } from '../events/catalog.ts';
import { boardProjection } from '../projections/board.ts';
import { executionsProjection } from '../projections/executions.ts';
import { type AnyProjection, checkpointName, type Projection } from '../projections/projection.ts';
import { queueProjection } from '../projections/queue.ts';
import type { EventStore } from '../runtime/store/eventStore.ts';

/** Every state a decider holds, by scope (a computer for the queue, a run stream for a run). */
export type ScopedStates = Record<string, unknown>;

/**
 * A decider's fold has a meaning that changes when its projection's does (the queue projection is the
 * queue decider's fold, the board projection the board's): a snapshot of an older meaning is then
 * ignored, exactly as an older checkpoint is.
 */
const VERSIONS: Readonly<Record<string, number>> = {
  queue: queueProjection.version,
  board: boardProjection.version,
  run: executionsProjection.version,
};

/**
 * Deciders whose states are exactly a projection the daemon keeps (the same fold of the same events):
 * their states are read from that projection's snapshots, not stored a second time.
 */
export interface Alias {
  readonly projection: AnyProjection;
  /** The decider's states, from the projection's state (sharing it, not copying it). */
  readonly states: (state: unknown) => ScopedStates;
  /** The projection's state, from the decider's states. */
  readonly state: (states: ScopedStates) => unknown;
}

const ALIASES: Readonly<Record<string, Alias>> = {
  queue: { projection: queueProjection as AnyProjection, states: (state) => state as ScopedStates, state: (states) => states },
  board: {
    projection: boardProjection as AnyProjection,
    states: (state) => ({ board: state }),
    state: (states) => states.board ?? boardProjection.initial(),
  },
};

/** The projection a decider's states are, if they are one. */
export function aliasOf(decider: AnyDecider): Alias | null {
  return Object.hasOwn(ALIASES, decider.name) ? ALIASES[decider.name]! : null;
}

/**
 * States no input can change any more, kept as the least that says so, so snapshots do not carry every
 * run ever settled. The compact state must make the decider ignore every input (a settled run ignores
 * all: `runDecider.ignores`), so that a replay from a snapshot and one from seq 0 judge alike.
 */
const RETIRED: Readonly<Record<string, (state: unknown) => unknown>> = {
  run: (state) => ((state as RunExecution).phase === 'settled' ? { phase: 'settled' } : state),
};

const keep = (state: unknown): unknown => state;

/** What to keep of a decider's state after an event was folded into it: the state, or its compact form once retired. */
export function retirementOf(decider: AnyDecider): (state: unknown) => unknown {
  return RETIRED[decider.name] ?? keep;
}

/**
 * The states `replay` folds for one decider, as a projection: what `replay --until` and `replay --run`
 * start from when a snapshot of it is stored, and what `rebuild` checks those snapshots against.
 * Its fold is exactly replay's: every event of a scope, inputs and decisions, through `evolve`.
 */
export function deciderProjection(decider: AnyDecider): Projection<ScopedStates> {
  const retire = retirementOf(decider);
  return {
    name: `decider:${decider.name}`,
    version: VERSIONS[decider.name] ?? 1,
    initial: () => ({}),
    evolve(states, event: DomainEvent) {
      const scope = decider.scopeOf(event);
      if (scope === null) return states;
      states[scope] = retire(decider.evolve(Object.hasOwn(states, scope) ? states[scope] : decider.initialState(scope), event));
      return states;
    },
  };
}

const cache = new WeakMap<AnyDecider, Projection<ScopedStates>>();

/** One projection object per decider, so its snapshot name is computed once. */
export function projectionOf(decider: AnyDecider): Projection<ScopedStates> {
  let projection = cache.get(decider);
  if (!projection) {
    projection = deciderProjection(decider);
    cache.set(decider, projection);
  }
  return projection;
}

/** Whether a decider's states are snapshotted on their own, rather than read from a projection's. */
export function storesItsOwn(decider: AnyDecider): boolean {
  return !Object.hasOwn(ALIASES, decider.name);
}

/** The deciders whose states are snapshotted on their own, as projections (for `rebuild` and its `--write`). */
export function storedDeciderProjections(deciders: readonly AnyDecider[]): AnyProjection[] {
  return deciders.filter(storesItsOwn).map((d) => projectionOf(d) as AnyProjection);
}

/** The fold a decider's states are kept as: its own, or the projection they are. */
export function snapshotProjectionOf(decider: AnyDecider): AnyProjection {
  return storesItsOwn(decider) ? (projectionOf(decider) as AnyProjection) : ALIASES[decider.name]!.projection;
}

/** The snapshot name a decider's states are read from: its own, or its projection's. */
export function snapshotNameOf(decider: AnyDecider): string {
  return checkpointName(snapshotProjectionOf(decider));
}

/** A decider's states from the parsed state of its fold (see snapshotProjectionOf). */
export function deciderStatesOf(decider: AnyDecider, parsed: unknown): ScopedStates {
  return storesItsOwn(decider) ? (parsed as ScopedStates) : ALIASES[decider.name]!.states(parsed);
}

/** A decider's states from its nearest snapshot at or before `seq` (null: none, start at seq 0). */
export async function nearestDeciderStates(
  store: Pick<EventStore, 'snapshots'>,
  decider: AnyDecider,
  seq: number,
): Promise<{ seq: number; states: ScopedStates } | null> {
  const snapshot = await store.snapshots.nearest(snapshotNameOf(decider), seq);
  if (!snapshot) return null;
  return { seq: snapshot.seq, states: deciderStatesOf(decider, JSON.parse(snapshot.state)) };
}
