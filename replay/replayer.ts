import type { AnyDecider } from '../actors/decider.ts';
import { codec as catalogCodec, type DomainEvent, type NewDomainEvent } from '../events/catalog.ts';
import { type AnyEventCodec, InvalidEventError } from '../events/codec.ts';
import type { FoldRow } from '../runtime/store/eventStore.ts';
import { sameDecision, view } from './compare.ts';
import { retirementOf, type ScopedStates } from './deciderStates.ts';
import { compare, type Lane, type OpenInput, type ReplayDifference, type ReplayStep } from './difference.ts';
import { fillData, parseData, type TypeNames, typesOf, unread } from './rows.ts';

export type { DifferenceKind, ReplayDifference, ReplayStep } from './difference.ts';

/** Where one decider's fold starts: its states as of `seq` (a snapshot's), or empty as of 0. */
export interface DeciderStart {
  readonly seq: number;
  readonly states: ScopedStates;
}

export interface ReplayerOptions {
  readonly starts?: ReadonlyMap<AnyDecider, DeciderStart>;
  /**
   * Decide only these inputs (the others are folded, not decided), folding only these scopes of each
   * decider (a scope not named is not needed by any of them). Without it every input is decided.
   */
  readonly only?: {
    readonly inputs: ReadonlySet<number>;
    readonly scopes: ReadonlyMap<AnyDecider, ReadonlySet<string>>;
  };
  /** Stop at the first difference (a full verification) or go on and gather every step. */
  readonly stopAtFirst?: boolean;
  /** The catalog the log's rows are read with: production's unless a test's log holds its fixtures' events. */
  readonly codec?: AnyEventCodec;
}

/**
 * Re-runs the deciders over the recorded inputs, in log order, each against its state folded from the
 * recorded events before it, and compares every re-derived decision with the one recorded (the events
 * whose `cause` is that input, which follow it in the same append). Fed one event at a time, so that
 * a caller can page through millions of them, start from snapshots, and stop where it likes.
 */
export class Replayer {
  readonly steps: ReplayStep[] = [];
  readonly differences: ReplayDifference[] = [];
  inputs = 0;
  decisions = 0;
  lastSeq = 0;
  private readonly lanes: Lane[];
  private readonly scopes: (string | null)[];
  private open: OpenInput | null = null;
  /** The last event without a cause, and whether it was decided here. */
  private lastInput = 0;
  private lastInputDecided = false;
  private lastInputHadDecider = false;
  private stopped = false;
  private start: number;
  /** The JSON text of the event being visited while its data is not parsed yet, else null. */
  private text: string | null = null;
  /** Whether the event being visited has had its data checked against the catalog. */
  private decoded = true;
  /** The event being visited is a recorded decision whose data is not valid: it is reported, never folded. */
  private malformed = false;
  private readonly codec: AnyEventCodec;
  private readonly types: TypeNames;
  /**
   * Messages (another actor's committed decisions a decider takes as its input, see
   * `Decider.messageScopeOf`) not decided yet, by seq: decided where the first decision citing one
   * comes, on the state as it is then, as the actor decided it. Each is dropped once decided, or once
   * its decider would ignore it (kept by scope for that look), so the map holds only what is in flight.
   */
  private readonly pending = new Map<number, { readonly lane: Lane; readonly scope: string; readonly event: DomainEvent }>();
  private readonly pendingByScope = new Map<Lane, Map<string, number[]>>();
  private readonly messageTypes: (ReadonlySet<string> | null)[];

  constructor(
    deciders: readonly AnyDecider[],
    private readonly options: ReplayerOptions = {},
  ) {
    this.lanes = deciders.map((decider) => {
      const start = options.starts?.get(decider);
      return {
        decider,
        retire: retirementOf(decider),
        states: start?.states ?? {},
        from: start?.seq ?? 0,
        scopes: options.only?.scopes.get(decider) ?? null,
        recall: decider.recall?.() ?? null,
      };
    });
    this.scopes = this.lanes.map(() => null);
    this.messageTypes = this.lanes.map((lane) => (lane.decider.messages?.length ? new Set<string>(lane.decider.messages) : null));
    this.codec = options.codec ?? catalogCodec;
    this.types = typesOf(this.codec);
    this.start = earliest(this.lanes);
    this.lastSeq = this.start;
  }

  /** The seq the replay reads from: the earliest start of its deciders. */
  get after(): number {
    return this.start;
  }

  /**
   * Skips ahead: the named deciders take these states (later snapshots) instead of folding the log up
   * to them. Only between two inputs, and only forward; the caller reads on from the new `after`.
   */
  jump(starts: ReadonlyMap<AnyDecider, DeciderStart>): void {
    this.close();
    for (const lane of this.lanes) {
      const start = starts.get(lane.decider);
      if (!start || start.seq <= lane.from || start.seq < this.lastSeq) continue;
      lane.states = start.states;
      lane.from = start.seq;
    }
    this.start = earliest(this.lanes);
    this.lastSeq = Math.max(this.lastSeq, this.start);
  }

  get firstDifference(): ReplayDifference | null {
    return this.differences[0] ?? null;
  }

  get done(): boolean {
    return this.stopped;
  }

  /** The seq of the input whose decisions are still being gathered, if any. */
  get openInput(): number | null {
    return this.open?.input.seq ?? null;
  }

  /** One decider's states, by scope: read them, do not keep them past the next event. */
  statesOf(decider: AnyDecider): ScopedStates {
    const lane = this.lanes.find((l) => l.decider === decider);
    if (!lane) throw new Error(`no decider ${decider.name} in this replay`);
    return lane.states;
  }

  /**
   * The next row of the log, its data still JSON text. The text is parsed and checked against the
   * catalog (upcast, if need be) only when a decider reads it. A recorded decision is first compared
   * as text with its re-derived one written out: when they are the same, the decision folded is the
   * one the decider just made, and the text is never parsed. Reading the log is what a replay of
   * millions of events spends most on.
   */
  visitRow(row: FoldRow): void {
    if (this.stopped) return;
    this.visitEvent(unread(row, this.types), row.data);
  }

  /** A row read whole, its data checked against the catalog: for a caller that also hands it to others (`feed`'s `visit`). */
  read(row: FoldRow): DomainEvent {
    const event = unread(row, this.types);
    fillData(event, this.codec.decodeData(row.seq, row.type, parseData(row.seq, row.type, row.data)));
    return event;
  }

  /** The next event of the log, read and checked against the catalog already. */
  visit(event: DomainEvent): void {
    if (this.stopped) return;
    this.visitEvent(event, null);
  }

  private visitEvent(event: DomainEvent, text: string | null): void {
    this.lastSeq = event.seq;
    this.text = text;
    this.decoded = text === null;
    this.malformed = false;
    this.scopeAll(event);
    this.visitScoped(event);
    this.noteMessage(event);
  }

  private visitScoped(event: DomainEvent): void {
    const cause = event.cause;
    if (cause !== null) {
      const open = this.open;
      if (open !== null && cause === open.input.seq) {
        this.record(open, event);
        this.decisions++;
        this.fold(event);
        this.reactIfDue(open);
        return;
      }
      this.close();
      const message = this.pending.get(cause);
      if (message !== undefined && (!this.options.only || this.options.only.inputs.has(cause))) {
        const opened = this.decideMessage(message);
        this.record(opened, event);
        this.decisions++;
        this.fold(event);
        this.reactIfDue(opened);
        return;
      }
      // A decision of an input this replay did not decide: one before its start, one it was not asked
      // about, or one whose decider's snapshot already holds it.
      const started = cause > this.start;
      const undecided = cause === this.lastInput && !this.lastInputDecided && (this.lastInputHadDecider || this.options.only !== undefined);
      if (!started || undecided) {
        this.fold(event);
        return;
      }
      if (this.options.only && !this.options.only.inputs.has(cause)) {
        this.fold(event);
        return;
      }
      this.parse(event);
      this.report({
        seq: event.seq,
        kind: 'orphan',
        input: event,
        decider: '?',
        scope: null,
        recorded: [view(event)],
        rederived: [],
        index: -1,
        detail:
          cause === this.lastInput
            ? `its cause, seq ${cause}, is an event no decider takes as an input`
            : `its cause is seq ${cause}, but the append it is in began with seq ${this.lastInput}: a decision follows its input in the same append`,
      });
      this.fold(event);
      return;
    }
    this.close();
    this.lastInput = event.seq;
    this.lastInputDecided = false;
    this.lastInputHadDecider = false;
    const index = this.deciderOf(event);
    if (index === -1) {
      this.fold(event);
      return;
    }
    this.lastInputHadDecider = true;
    const lane = this.lanes[index]!;
    if (event.seq <= lane.from || (this.options.only && !this.options.only.inputs.has(event.seq))) {
      this.fold(event);
      return;
    }
    this.inputs++;
    this.lastInputDecided = true;
    this.decode(event);
    const scope = this.scopes[index]!;
    const state = this.stateOf(lane, scope);
    // An input of an older version is decided as the host would have recorded it now (its one upcast).
    const input = lane.recall ? lane.recall.fill(state, event as NewDomainEvent, event.seq) : (event as NewDomainEvent);
    const open = this.decide(lane, scope, event, input);
    this.fold(event);
    this.reactIfDue(open);
  }

  /** Re-decides an input (or a message) against its scope's state now, and opens it for its recorded decisions. */
  private decide(lane: Lane, scope: string, event: DomainEvent, input: NewDomainEvent): OpenInput {
    const state = this.stateOf(lane, scope);
    const ignored = this.afterADifference(() => lane.decider.ignores?.(state, input) ?? false, false);
    // An ignored input is a difference already; its state may be a retired one's, too little to decide from.
    const answers = ignored ? [] : this.afterADifference(() => lane.decider.decide(state, input), []);
    const open: OpenInput = {
      input: event,
      lane,
      scope,
      rederived: answers,
      recorded: [],
      answers: answers.length,
      reacted: false,
      ignored,
      differs: false,
      unreadable: null,
    };
    this.open = open;
    return open;
  }

  /** Keeps an event that is a message of a decider (see `pending`), once it is read whole. */
  private noteMessage(event: DomainEvent): void {
    if (this.malformed) return;
    for (let i = 0; i < this.lanes.length; i++) {
      if (!this.messageTypes[i]?.has(event.type)) continue;
      const lane = this.lanes[i]!;
      if (event.seq <= lane.from) continue;
      this.decode(event);
      const scope = lane.decider.messageScopeOf!(event);
      if (scope === null || (lane.scopes !== null && !lane.scopes.has(scope))) continue;
      this.pending.set(event.seq, { lane, scope, event });
      const byScope = this.pendingByScope.get(lane) ?? this.pendingByScope.set(lane, new Map()).get(lane)!;
      byScope.set(scope, [...(byScope.get(scope) ?? []), event.seq]);
      this.dropIgnored(lane, scope);
    }
  }

  /** A message re-decided where its first recorded decision comes: against its decider's state now, never folded into it. */
  private decideMessage({ lane, scope, event }: { readonly lane: Lane; readonly scope: string; readonly event: DomainEvent }): OpenInput {
    this.forget(lane, scope, event.seq);
    return this.decide(lane, scope, event, event as NewDomainEvent);
  }

  /** Drops the messages of a scope its decider now ignores: in its state as folded, none would be decided any more. */
  private dropIgnored(lane: Lane, scope: string): void {
    const seqs = this.pendingByScope.get(lane)?.get(scope);
    if (!seqs) return;
    const state = this.stateOf(lane, scope);
    for (const seq of seqs) {
      const message = this.pending.get(seq)!.event as NewDomainEvent;
      if (this.afterADifference(() => lane.decider.ignores?.(state, message) ?? false, true)) this.forget(lane, scope, seq);
    }
  }

  private forget(lane: Lane, scope: string, seq: number): void {
    this.pending.delete(seq);
    const byScope = this.pendingByScope.get(lane);
    const left = byScope?.get(scope)?.filter((s) => s !== seq) ?? [];
    if (left.length) byScope!.set(scope, left);
    else byScope?.delete(scope);
  }

  /** Closes the last input: its decisions are all in (the log ended, or the next append began). */
  finish(): void {
    this.close();
  }

  private scopeAll(event: DomainEvent): void {
    for (let i = 0; i < this.lanes.length; i++) this.scopes[i] = this.lanes[i]!.decider.scopeOf(event);
  }

  private deciderOf(event: DomainEvent): number {
    for (let i = 0; i < this.lanes.length; i++) {
      if (this.scopes[i] !== null && this.lanes[i]!.decider.isInput(event)) return i;
    }
    return -1;
  }

  private stateOf(lane: Lane, scope: string): unknown {
    if (Object.hasOwn(lane.states, scope)) return lane.states[scope];
    const state = lane.decider.initialState(scope);
    lane.states[scope] = state;
    return state;
  }

  /** Compares a recorded decision with its re-derived one as it comes in, before it is folded. */
  private record(open: OpenInput, event: DomainEvent): void {
    const derived = open.rederived[open.recorded.length];
    open.recorded.push(event);
    const text = this.text;
    if (derived !== undefined && text !== null && derived.type === event.type && derived.at === event.at && derived.stream === event.stream) {
      // Written out, the decision just made is the recorded one: fold it, and skip reading the text.
      if (JSON.stringify(derived.data) === text) {
        fillData(event, derived.data);
        this.text = null;
        this.decoded = true;
        return;
      }
    }
    try {
      this.parse(event);
    } catch (error) {
      if (!(error instanceof InvalidEventError)) throw error;
      open.differs = true;
      this.malformed = true;
      return;
    }
    if (derived !== undefined && sameDecision(event, derived)) {
      // The same on what it decides, its wording set aside: what was set aside must still read as its type.
      try {
        this.decode(event);
      } catch (error) {
        if (!(error instanceof InvalidEventError)) throw error;
        open.differs = true;
        open.unreadable ??= { index: open.recorded.length - 1, problem: error.problem };
        this.malformed = true;
      }
      return;
    }
    open.differs = true;
    // An older shape is upcast by the decoding: compare again once decoded.
    if (this.decoded) return;
    try {
      this.decode(event);
    } catch (error) {
      if (!(error instanceof InvalidEventError)) throw error;
      this.malformed = true;
      return;
    }
    if (derived !== undefined && sameDecision(event, derived)) open.differs = false;
  }

  /** Parses the data of the event being visited from its JSON text, if it was not yet. */
  private parse(event: DomainEvent): void {
    if (this.text === null) return;
    const text = this.text;
    this.text = null;
    fillData(event, parseData(event.seq, event.type, text));
  }

  /** Checks the data of the event being visited against the catalog, upcasting an older shape. */
  private decode(event: DomainEvent): void {
    if (this.decoded) return;
    this.parse(event);
    fillData(event, this.codec.decodeData(event.seq, event.type, event.data));
    this.decoded = true;
  }

  /** Folds an event whose scopes `scopeAll` just computed into every decider that has not seen it. */
  private fold(event: DomainEvent): void {
    if (this.malformed) return;
    for (let i = 0; i < this.lanes.length; i++) {
      const scope = this.scopes[i];
      if (scope === null || scope === undefined) continue;
      const lane = this.lanes[i]!;
      if (event.seq <= lane.from || (lane.scopes !== null && !lane.scopes.has(scope))) continue;
      this.decode(event);
      lane.recall?.note(event);
      const state = this.stateOf(lane, scope);
      lane.states[scope] = this.afterADifference(() => lane.retire(lane.decider.evolve(state, event)), state);
      if (this.pendingByScope.get(lane)?.has(scope)) this.dropIgnored(lane, scope);
    }
  }

  /**
   * A decider's call on states folded from a log that already differs (a tampered decision folded, or
   * reacted to): whatever it throws there is a consequence of the difference being reported, never a
   * crash of the replay; it gives `otherwise`. Before any difference, a throw is a bug and goes up.
   */
  private afterADifference<T>(call: () => T, otherwise: T): T {
    if (!this.open?.differs && this.differences.length === 0) return call();
    try {
      return call();
    } catch {
      // Not hidden: the difference this follows is what the replay reports (it stops there, or the step says so).
      return otherwise;
    }
  }

  // Once the input's direct answers are folded, its follow-ups are decided from that state.
  private reactIfDue(open: OpenInput): void {
    if (open.reacted || open.recorded.length < open.answers) return;
    open.reacted = true;
    const state = this.stateOf(open.lane, open.scope);
    const followUps = this.afterADifference(() => open.lane.decider.react?.(state, open.input as NewDomainEvent) ?? [], []);
    if (followUps.length) open.rederived.push(...followUps);
  }

  private close(): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    this.reactIfDue(open);
    const difference = open.differs || open.ignored || open.recorded.length !== open.rederived.length ? compare(open) : null;
    if (this.options.only) {
      this.steps.push({
        input: open.input,
        decider: open.lane.decider.name,
        scope: open.scope,
        recorded: open.recorded,
        rederived: open.rederived,
        difference,
      });
    }
    if (difference) this.report(difference);
  }

  private report(difference: ReplayDifference): void {
    this.differences.push(difference);
    if (this.options.stopAtFirst) this.stopped = true;
  }
}

function earliest(lanes: readonly Lane[]): number {
  let seq = Number.POSITIVE_INFINITY;
  for (const lane of lanes) seq = Math.min(seq, lane.from);
  return Number.isFinite(seq) ? seq : 0;
}
