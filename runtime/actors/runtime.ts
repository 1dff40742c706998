/**
 * The only door to nact. We use nact for mailboxes and hierarchy, never for persistence
 * (`spawnPersistent`): the SQLite log is the persistence, and an actor rebuilds its state itself with
 * `hydrate` whenever it (re)starts. Time is the `Clock` the system is given (docs/architecture.md#actors-door).
 *
 * nact 7.6.2 facts this module is built on (pinned by test/runtime/runtime.test.ts):
 * - an async receive is awaited before the next message is taken, so one actor = one message at a time;
 * - `initialStateFunc` is NOT awaited, and a reset calls it again: so the state lives here, not in nact.
 *   Each incarnation holds it, unhydrated at first and hydrated inside the mailbox before the first
 *   message; a crash's reset is ours too (the state dropped, the children stopped);
 * - references are paths, and a stopped actor's messages are dropped silently. We therefore keep one
 *   `Cell` per path and revive a passivated actor when something is sent to it;
 * - `stop` stops an actor and its descendants at once, and nact stops an actor on its own only when
 *   told to (a `shutdownAfter`, a crash decision of stop or reset): we tell it neither, so every stop
 *   is one this door made and it knows which paths live without reading nact's internal system map;
 * - nact arms the global setTimeout itself for `shutdownAfter` and for a query's timeout: so the door
 *   passivates by an idle timer of its `Clock`, and answers queries through an asker of its own, timed
 *   by the `Clock`. A virtual clock (the simulator's, a test's) then moves every timer of the actors.
 */
import { createRequire } from 'node:module';
import { Asker, ask } from './asker.ts';
import { type Clock, MAX_TIMER_MS, systemClock } from './clock.ts';

// nact's bundled index.d.ts is wrong, so we state the little we use ourselves and `require` it untyped.
interface NactRef {
  readonly system: { readonly name: string };
}
type NactDecisions = Record<'resume', symbol>;
interface Nact {
  start(): NactRef;
  spawn(
    parent: NactRef,
    f: (state: undefined, msg: unknown) => Promise<undefined>,
    name: string,
    props: { onCrash: (msg: unknown, error: unknown, ctx: NactDecisions) => symbol },
  ): NactRef;
  dispatch(ref: NactRef, msg: unknown): void;
  stop(ref: NactRef): void;
}
const require = createRequire(import.meta.url);
const nact = require('nact') as Nact;

declare const MSG: unique symbol;
declare const REPLY: unique symbol;
/** Contravariant in Msg: an `ActorRef<A | B>` may be used where an `ActorRef<A>` is wanted. */
export interface ActorRef<Msg> {
  readonly name: string;
  readonly path: string;
  readonly [MSG]?: (msg: Msg) => void;
}
export interface ReplyTo<Reply> {
  readonly [REPLY]?: (reply: Reply) => void;
}
export interface ActorSystem {
  readonly name: string;
}
export type Parent = ActorSystem | ActorRef<never>;

export interface ActorContext<Msg> {
  readonly self: ActorRef<Msg>;
  readonly name: string;
  readonly path: string;
  readonly system: ActorSystem;
}

/** reset: drop the state and `hydrate` again; resume: keep the state from before the message; stop. */
export type CrashDecision = 'reset' | 'resume' | 'stop';
export interface Crash<Msg> {
  readonly message: Msg;
  readonly error: unknown;
  readonly phase: 'hydrate' | 'receive';
}
export interface CrashReport extends Crash<unknown> {
  readonly actor: string;
  readonly decision: CrashDecision;
}

export interface ActorSpec<State, Msg> {
  /** Builds the state from projections/the log: on the first message after every spawn or reset. */
  hydrate: (ctx: ActorContext<Msg>) => State | Promise<State>;
  receive: (state: State, msg: Msg, ctx: ActorContext<Msg>) => State | Promise<State>;
  /**
   * Stop after this long without messages, on the system's clock; the next message revives it. Best on
   * leaves: a passivating (or resetting) actor's children stop too, their queued messages dropped.
   */
  passivateAfterMs?: number;
  /** Default 'reset'. Escalation is deliberately not offered: siblings stay isolated. */
  onCrash?: (crash: Crash<Msg>) => CrashDecision;
  /**
   * The state could not be built for `msg` (the log unreadable: its database server down): the actor
   * answers its asker now, as it sees fit, rather than leave it to its query's timeout. The actor then
   * crashes as any other (`onCrash`), and the next message hydrates again.
   */
  hydrateFailed?: (msg: Msg, error: unknown) => void;
}

export class InvalidActorNameError extends Error {}
export class ActorStoppedError extends Error {}
export class QueryTimeoutError extends Error {}

type Slot = { readonly hydrated: false } | { readonly hydrated: true; readonly state: unknown };
const UNHYDRATED: Slot = Object.freeze({ hydrated: false });
// Cells are heterogeneous; the typed API above is the only way in, so erasing here is safe.
// biome-ignore lint/suspicious/noExplicitAny: cells of every message and state type, reached only through the typed API
type ErasedSpec = ActorSpec<any, any>;
const NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const DECISIONS: readonly CrashDecision[] = ['reset', 'resume', 'stop'];
// A timer holds at most this long; a longer one would fire at once.
const checkMs = (what: string, ms: number | undefined) => {
  if (ms !== undefined && !(ms >= 1 && ms <= MAX_TIMER_MS)) throw new RangeError(`${what} must be 1..${MAX_TIMER_MS} ms, got ${ms}`);
};

/** The fewest cells a system holds before it looks for passivated ones to forget. */
const SWEEP_FROM = 1_024;

class SystemImpl implements ActorSystem {
  readonly cells = new Map<string, Cell>(); // path → cell, so a passivated actor keeps its refs
  /** Past this many cells, passivated leaves are forgotten (see `sweep`). */
  sweepAt = SWEEP_FROM;
  stopped = false;
  constructor(
    readonly name: string,
    readonly nactRef: NactRef,
    readonly clock: Clock,
    readonly onError: (r: CrashReport) => void,
  ) {}
}

/** One spawn of a cell's actor in nact, awake until the door stops it (or an ancestor of it). */
class Incarnation {
  awake = true;
  slot: Slot = UNHYDRATED;
  /** Messages the door handed it whose receive has not ended: none, and the idle timer runs. */
  pending = 0;
  /**
   * Queries' messages handed over and not yet taken by a receive, each with what tells its asker that it
   * never will be: nact drops a stopped actor's mailbox, and its askers would wait out their timeouts.
   */
  readonly untaken = new Map<unknown, () => void>();
  cancelIdle: (() => void) | undefined;
  constructor(readonly nactRef: NactRef) {}
}

class Cell implements ActorRef<never> {
  retired = false; // stopped on purpose (stop, 'stop' decision, system stop): never revived
  /** Passivated and dropped from the map: a ref still held finds the path's cell again (`asCell`). */
  forgotten = false;
  readonly children = new Set<Cell>();
  incarnation: Incarnation | undefined;
  phase: Crash<unknown>['phase'] = 'hydrate';
  // biome-ignore lint/suspicious/noExplicitAny: nact's context of an erased cell (see ErasedSpec)
  readonly ctx: ActorContext<any>;
  constructor(
    readonly system: SystemImpl,
    public parent: SystemImpl | Cell,
    readonly name: string,
    readonly path: string,
    public spec: ErasedSpec,
  ) {
    this.ctx = Object.freeze({ self: this, name, path, system });
    if (parent instanceof Cell) parent.children.add(this);
  }
}

/**
 * A passivated actor's cell is kept so the refs others hold reach its next incarnation; kept for ever,
 * one a run or session ever handled, they would grow the map without bound. So once the map has
 * doubled since the last look, passivated leaves are forgotten: `child` makes a new cell for the path,
 * and a ref still held to a forgotten one finds the path's current cell, or takes its place again.
 */
function sweep(sys: SystemImpl): void {
  if (sys.cells.size < sys.sweepAt) return;
  for (const [path, cell] of sys.cells) {
    if (cell.children.size > 0 || isLive(cell)) continue;
    sys.cells.delete(path);
    cell.forgotten = true;
    if (cell.parent instanceof Cell) cell.parent.children.delete(cell);
  }
  sys.sweepAt = Math.max(SWEEP_FROM, 2 * sys.cells.size);
}

/** How many actors a system keeps a cell for (live, or passivated and not yet forgotten). */
export function cellCount(system: ActorSystem): number {
  if (!(system instanceof SystemImpl)) throw new TypeError('not an ActorSystem from actors/runtime');
  return system.cells.size;
}

/** Whether an actor is in memory now: false once it passivated or stopped (a message revives the one that passivated). */
export function isAwake(ref: ActorRef<never>): boolean {
  if (!(ref instanceof Cell)) throw new TypeError('not an ActorRef from actors/runtime');
  // A forgotten cell (see `sweep`) passivated; read as it is, not brought back into the map.
  return !ref.forgotten && isLive(ref);
}

/**
 * `name` only labels errors: nact keys systems by name in a process-wide map, so nact keeps its random
 * one. `clock` times passivation and queries (default: the process's).
 */
export function startActorSystem(opts: { name?: string; clock?: Clock; onError?: (report: CrashReport) => void } = {}): ActorSystem {
  const nactRef = nact.start();
  const onError = opts.onError ?? ((r: CrashReport) => console.error(`actor ${r.actor}: ${r.phase} failed (${r.decision})`, r.message, r.error));
  return new SystemImpl(opts.name ?? nactRef.system.name, nactRef, opts.clock ?? systemClock, onError);
}

export function stopSystem(system: ActorSystem): void {
  if (!(system instanceof SystemImpl)) throw new TypeError('not an ActorSystem from actors/runtime');
  if (system.stopped) return;
  system.stopped = true;
  for (const cell of system.cells.values()) {
    cell.retired = true;
    if (cell.incarnation) fallAsleep(cell.incarnation);
  }
  system.cells.clear();
  nact.stop(system.nactRef);
}

/** Spawns a fresh actor; throws if one of that name is alive under `parent` (use `child` to get-or-spawn). */
export function spawnActor<State, Msg>(parent: Parent, name: string, spec: ActorSpec<State, Msg>): ActorRef<Msg> {
  const { sys, owner, path } = locate(parent, name);
  checkMs(`actor "${path}": passivateAfterMs`, spec.passivateAfterMs);
  const existing = sys.cells.get(path);
  if (existing && isLive(existing)) throw new Error(`actor "${path}" already exists`);
  if (!existing) sweep(sys);
  // A passivated cell is reused so the refs others hold reach the new incarnation.
  const cell = existing ?? new Cell(sys, owner, name, path, spec as ErasedSpec);
  cell.spec = spec as ErasedSpec;
  sys.cells.set(path, cell);
  incarnate(cell);
  return cell as ActorRef<Msg>;
}

/** Get-or-spawn: the live (or passivated, now revived) child `name`, else a new one from `spec`. */
export function child<State, Msg>(parent: Parent, name: string, spec: ActorSpec<State, Msg>): ActorRef<Msg> {
  const { sys, path } = locate(parent, name);
  const existing = sys.cells.get(path);
  if (existing && revive(existing)) return existing as ActorRef<Msg>;
  return spawnActor(parent, name, spec);
}

/** Fire and forget. False when the actor was stopped for good (the message is dropped, as in nact). */
export function dispatch<Msg>(ref: ActorRef<Msg>, msg: NoInfer<Msg>): boolean {
  const cell = asCell(ref);
  if (!revive(cell)) return false;
  handOver(cell.incarnation!, msg);
  return true;
}

/** Into the mailbox of an awake incarnation: it is not idle until this message is handled. */
function handOver(incarnation: Incarnation, msg: unknown): void {
  incarnation.pending++;
  incarnation.cancelIdle?.();
  incarnation.cancelIdle = undefined;
  nact.dispatch(incarnation.nactRef, msg);
}

type ReplyOf<M> = M extends { readonly replyTo: ReplyTo<infer R> } ? R : unknown;
type Matching<Msg, M> = Msg extends unknown ? (M extends Msg ? Msg : never) : never;

/**
 * Ask and wait; the timeout (on the system's clock) is required so a lost reply cannot hang the caller.
 * The reply type is read from the `replyTo: ReplyTo<R>` field of the message member that `make` builds.
 * `const M` is what keeps `type: 'get'` a literal here (a plain generic return widens it); the price is
 * that an inline array literal in the message needs a `readonly` array type.
 */
export async function query<Msg, const M extends Msg>(
  ref: ActorRef<Msg>,
  // biome-ignore lint/suspicious/noExplicitAny: the answer's type is the caller's `M` asks for; the door cannot say it
  make: (replyTo: ReplyTo<any>) => M,
  timeoutMs: number,
): Promise<ReplyOf<Matching<Msg, M>>> {
  const cell = asCell(ref);
  checkMs(`query to actor "${cell.path}": timeoutMs`, timeoutMs ?? NaN);
  if (!revive(cell)) throw new ActorStoppedError(`query to actor "${cell.path}": the actor is stopped`);
  const timedOut = () => new QueryTimeoutError(`query to actor "${cell.path}" timed out after ${timeoutMs} ms`);
  const answered = ask(cell.system.clock, timeoutMs, timedOut, (asker, fail) => {
    const incarnation = cell.incarnation!;
    const msg = make(asker as never);
    incarnation.untaken.set(msg, () => fail(new ActorStoppedError(`query to actor "${cell.path}": the actor stopped before it took the message`)));
    handOver(incarnation, msg);
  });
  return (await answered) as ReplyOf<Matching<Msg, M>>;
}

/** Answers a query; a reply after the asker gave up is dropped. */
export function reply<Reply>(replyTo: ReplyTo<Reply>, value: Reply): void {
  if (!(replyTo instanceof Asker)) throw new TypeError('not a ReplyTo from actors/runtime');
  replyTo.answer(value);
}

/** Stops the actor and its descendants for good: their refs stay dead even if the name is spawned again. */
export function stop(ref: ActorRef<never>): void {
  const cell = asCell(ref);
  // Asleep already, it must not touch nact: its path may hold a newer incarnation.
  if (isLive(cell)) putToSleep(cell, cell.incarnation!);
  retire(cell);
}

/** The cell and its descendants, for good: through its own children, not a scan of every path. */
function retire(cell: Cell): void {
  cell.retired = true;
  if (cell.system.cells.get(cell.path) === cell) cell.system.cells.delete(cell.path);
  if (cell.parent instanceof Cell) cell.parent.children.delete(cell);
  for (const c of [...cell.children]) retire(c);
}

function isLive(cell: Cell): boolean {
  return !cell.retired && !!cell.incarnation?.awake;
}

/**
 * Stops an awake incarnation in nact, which stops its descendants with it at once: the door records
 * them all asleep (an awake actor's children are among its cell's, and an asleep one has none awake).
 */
function putToSleep(cell: Cell, incarnation: Incarnation): void {
  for (const c of [...cell.children]) descendantsAsleep(c);
  fallAsleep(incarnation);
  nact.stop(incarnation.nactRef);
}

function descendantsAsleep(cell: Cell): void {
  if (!cell.incarnation?.awake) return;
  fallAsleep(cell.incarnation);
  for (const c of cell.children) descendantsAsleep(c);
}

/**
 * Every stop comes here (passivation only with an empty mailbox): the queries still in its mailbox are
 * told at once that it stopped before taking them. The one in hand is not: its receive may already have
 * appended what it asked, and answers it, or its timeout does.
 */
function fallAsleep(incarnation: Incarnation): void {
  incarnation.awake = false;
  incarnation.cancelIdle?.();
  incarnation.cancelIdle = undefined;
  const untaken = [...incarnation.untaken.values()];
  incarnation.untaken.clear();
  for (const tell of untaken) tell();
}

/**
 * Arms the idle timer once the mailbox is empty after a message or a crash. A microtask later: just
 * before nact takes its next step (its `await` of the receive, or of the crash decision, resumes then),
 * where nact armed its own `shutdownAfter` timer; so a message handed over meanwhile is seen by both,
 * and a virtual clock is asked for its timers in the order it always was (a seed keeps its history).
 */
function idleSoon(spec: ErasedSpec, cell: Cell, incarnation: Incarnation): void {
  const ms = spec.passivateAfterMs;
  if (ms === undefined) return;
  queueMicrotask(() => {
    if (incarnation.awake && incarnation.pending === 0 && !incarnation.cancelIdle) armIdle(cell, incarnation, ms);
  });
}

function armIdle(cell: Cell, incarnation: Incarnation, ms: number): void {
  incarnation.cancelIdle = cell.system.clock.after(ms, () => {
    incarnation.cancelIdle = undefined;
    if (incarnation.awake && incarnation.pending === 0) putToSleep(cell, incarnation);
  });
}

/** Alive, or brought back after passivation (or a parent's reset, which stops its children). */
function revive(cell: Cell): boolean {
  if (cell.retired || cell.system.stopped) return false;
  if (isLive(cell)) return true;
  if (cell.parent instanceof Cell) {
    // Its parent may have been forgotten and spawned anew meanwhile: the child follows the path's cell.
    const parent = asCell(cell.parent);
    cell.parent = parent;
    parent.children.add(cell);
    if (!revive(parent)) return false;
  }
  incarnate(cell);
  return true;
}

function incarnate(cell: Cell): void {
  const { spec, ctx } = cell;
  const parentRef = cell.parent instanceof Cell ? cell.parent.incarnation!.nactRef : cell.parent.nactRef;
  cell.retired = false;
  // Assigned before any message can reach it: nact runs none before a later turn (setImmediate).
  let incarnation: Incarnation;
  const nactRef = nact.spawn(
    parentRef,
    // nact's state is not used (see the module's comment): the incarnation holds ours.
    async (_nactState, msg) => {
      incarnation.untaken.delete(msg);
      const { slot } = incarnation;
      let state: unknown;
      if (slot.hydrated) state = slot.state;
      else {
        cell.phase = 'hydrate';
        try {
          state = await spec.hydrate(ctx);
        } catch (error) {
          incarnation.pending--;
          spec.hydrateFailed?.(msg, error);
          throw error;
        }
      }
      cell.phase = 'receive';
      let next: unknown;
      try {
        next = await spec.receive(state, msg, ctx);
      } finally {
        incarnation.pending--;
      }
      incarnation.slot = { hydrated: true, state: next };
      idleSoon(spec, cell, incarnation);
      return undefined;
    },
    cell.name,
    {
      onCrash: (message, error, nactDecisions) =>
        crashed(spec, cell, incarnation, { message: message as never, error, phase: cell.phase }, nactDecisions),
    },
  );
  incarnation = new Incarnation(nactRef);
  cell.incarnation = incarnation;
  if (spec.passivateAfterMs !== undefined) armIdle(cell, incarnation, spec.passivateAfterMs);
}

/**
 * nact's crash hook. The door carries the decision out itself and has nact only resume (which does
 * nothing for an actor the door stopped): the state drops here on a reset, and every stop is the door's.
 */
function crashed(spec: ErasedSpec, cell: Cell, incarnation: Incarnation, crash: Crash<never>, nactDecisions: NactDecisions): symbol {
  let decision: CrashDecision;
  // A crash policy that itself throws stops the actor: the stop is told with the crash, just below.
  try {
    decision = spec.onCrash?.(crash) ?? 'reset';
  } catch {
    decision = 'stop';
  }
  if (!DECISIONS.includes(decision)) decision = 'stop';
  // An incarnation stopped with its parent while its message ran may crash after the cell was revived:
  // the decision is then the old incarnation's alone, and the new one goes on.
  if (decision === 'stop' && cell.incarnation === incarnation) {
    if (incarnation.awake) putToSleep(cell, incarnation);
    retire(cell);
  } else if (decision === 'reset' && incarnation.awake) {
    incarnation.slot = UNHYDRATED;
    // As nact's own reset would: the children stop too, and the next message to one revives it.
    for (const c of [...cell.children]) if (isLive(c)) putToSleep(c, c.incarnation!);
  }
  // nact does not await or catch around this hook: a throwing logger would wedge the mailbox.
  try {
    cell.system.onError({ ...crash, actor: cell.path, decision });
  } catch {
    /* the logger's own failure: nowhere left to tell it */
  }
  if (decision !== 'stop') idleSoon(spec, cell, incarnation);
  return nactDecisions.resume;
}

function locate(parent: Parent, name: string): { sys: SystemImpl; owner: SystemImpl | Cell; path: string } {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new InvalidActorNameError(`invalid actor name ${JSON.stringify(name)}: use 1-128 of [A-Za-z0-9_.-]`);
  }
  if (parent instanceof SystemImpl) {
    if (parent.stopped) throw new ActorStoppedError(`actor system "${parent.name}" is stopped`);
    return { sys: parent, owner: parent, path: name };
  }
  const owner = asCell(parent as ActorRef<never>);
  if (!revive(owner)) throw new ActorStoppedError(`cannot spawn "${name}": parent "${owner.path}" is stopped`);
  return { sys: owner.system, owner, path: `${owner.path}/${name}` };
}

function asCell(ref: ActorRef<never>): Cell {
  if (!(ref instanceof Cell)) throw new TypeError('not an ActorRef from actors/runtime');
  if (!ref.forgotten || ref.retired) return ref;
  // A forgotten cell (see `sweep`): the path's cell now, or this one back in its place.
  const current = ref.system.cells.get(ref.path);
  if (current) return current;
  ref.forgotten = false;
  ref.system.cells.set(ref.path, ref);
  if (ref.parent instanceof Cell) {
    ref.parent = asCell(ref.parent);
    ref.parent.children.add(ref);
  }
  return ref;
}
