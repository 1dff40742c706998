import type { Decider } from '../../actors/decider.ts';
import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import { AppendChain, type AppendLease, type EventStore, StaleVersionError } from '../store/eventStore.ts';
import { type Clock, systemClock } from './clock.ts';
import {
  type DecidedAppend,
  type DecidedMessage,
  decideAppend,
  decideMessageAppend,
  type Recorded,
  recorded,
  type StepOutcome,
} from './decideAndAppend.ts';
import { retryOnConflict } from './retryOnConflict.ts';
import { type ActorRef, type ActorSystem, dispatch, query, type ReplyTo, reply, spawnActor, stop } from './runtime.ts';
import { type InputOptions, recordedUnlessFailFast } from './untilRecorded.ts';

type Message<S, I extends NewDomainEvent, D extends NewDomainEvent> =
  | { readonly kind: 'input'; readonly input: I; readonly message: boolean; readonly replyTo: ReplyTo<StepOutcome<S, I, D> | Error> }
  | { readonly kind: 'read'; readonly read: (state: S) => unknown; readonly replyTo: ReplyTo<unknown> }
  | { readonly kind: 'rehydrate'; readonly replyTo: ReplyTo<true | Unhydrated> }
  | { readonly kind: 'observe'; readonly event: DomainEvent };

interface Held<S> {
  /** Folded ahead of the log: it includes the decisions of appends still in flight. */
  state: S;
  /** Every event up to this seq was in the log when the state was folded from it. */
  readonly hydratedThrough: number;
  /** Each stream's version after this actor's last append to it (in flight or committed): the next one's expected version. */
  readonly versions: Map<string, number>;
  /** This incarnation's appends, each standing on the ones before: one refused, the later ones are too. */
  readonly chain: AppendChain;
  /**
   * With `guardKinds`: the state holds every event of those kinds through this seq (the fold's, then
   * each guarded append's last, as its commit found nobody else's since): what the next guard checks after.
   */
  knownThrough: number;
  /**
   * With `tailFold` and `guardKinds`: the state as committed (none of the decisions folded ahead), exactly
   * through `seq`. A refused append is caught up from it by the log's tail since `seq`, instead of a fold
   * of the whole log (see refold). Shared by the generations of one incarnation.
   */
  readonly committed: { state: S; seq: number } | null;
}

export interface TailFold<S> {
  /** Folds any event of the log into the state, ignoring those outside its scope (the projection's evolve). */
  readonly fold: (state: S, event: DomainEvent) => S;
  /** Visits the log's events after `after`, in order, and answers the last seq visited (`after` when none): `foldLog` on the store. */
  readonly readAfter: (after: number, visit: (event: DomainEvent) => void) => Promise<number>;
  /** A copy of the state sharing nothing `fold` changes in place (`structuredClone` is slow on a large state). */
  readonly copy: (state: S) => S;
}

export interface DecidingActorSpec<S, I extends NewDomainEvent = NewDomainEvent, D extends NewDomainEvent = NewDomainEvent> {
  readonly name: string;
  readonly decider: Decider<S, I, D>;
  /**
   * Builds the state from the log (a projection's checkpoint and tail): on start and after a crash.
   * `until` is the log's head as the actor read it; with `tailFold`, the state must be folded exactly through it.
   */
  readonly hydrate: (until: number) => Promise<S>;
  /**
   * With `guardKinds`: how a refused actor folds only what was appended since its committed state
   * rather than the whole log again (two busy boards on one log refuse each other all the time).
   */
  readonly tailFold?: TailFold<S>;
  /** Effects of committed decisions; never called for a refused append. */
  readonly afterCommit?: (state: S, decisions: readonly Recorded<D>[], input: Recorded<I>) => void;
  readonly queryTimeoutMs?: number;
  /** Times the waits between attempts of an input the log could not take (the system clock by default). */
  readonly clock?: Pick<Clock, 'after'>;
  /** Draws the jitter of the waits between rounds of conflicts, in [0, 1) (Math.random by default). */
  readonly random?: () => number;
  /**
   * Stream kinds (owner-less streams) whose events all feed this actor's state, shared across them (the
   * board's): each append is guarded (AppendGuard) so that, with several processes deciding for the
   * same scope, a decision taken before another's commit of those kinds was seen is refused and taken
   * again on the state folded afresh.
   */
  readonly guardKinds?: readonly string[];
  /** The lease an input's append must hold (a chore done once across processes, docs/rules.md#postgresql-board): none for most. */
  readonly leaseFor?: (input: I) => AppendLease | null;
}

/**
 * An actor whose every message is an input: appended with the decisions taken from it before anything
 * else comes of it, and answered once committed. The actor decides its next input without waiting for
 * that commit (as Akka's `persistAsync`), so the inputs of one busy actor share the store's group
 * commits instead of paying an fsync each; its appends form a chain, and a refused or failed one
 * refuses the rest of the chain unwritten, after which the actor rehydrates from the log. Reads wait
 * for the appends in flight: what a reader sees is committed.
 */
export class DecidingActor<S, I extends NewDomainEvent = NewDomainEvent, D extends NewDomainEvent = NewDomainEvent> {
  private readonly ref: ActorRef<Message<S, I, D>>;
  private readonly timeoutMs: number;
  private readonly clock: Pick<Clock, 'after'>;
  /** Settles once every append handed to the store so far has been answered (kept across resets). */
  private inFlight: Promise<void> = Promise.resolve();
  /** Inputs sent and not yet taken from the mailbox. */
  private waiting = 0;
  /** Set while more inputs wait behind the one just decided: their appends join its group commit. */
  private releaseCommits: (() => void) | null = null;

  constructor(
    system: ActorSystem,
    private readonly store: EventStore,
    private readonly spec: DecidingActorSpec<S, I, D>,
  ) {
    this.timeoutMs = spec.queryTimeoutMs ?? 30_000;
    this.clock = spec.clock ?? systemClock;
    this.ref = spawnActor<Held<S>, Message<S, I, D>>(system, spec.name, {
      hydrate: () => this.hydrate(),
      receive: (held, message) => this.receive(held, message),
      hydrateFailed: (message, error) => this.unanswerable(message, error),
    });
  }

  /**
   * Records the input and the decisions taken from it; resolves once they are committed. An input the
   * log cannot take (disk full, read-only file), or refused as stale CONFLICT_RETRIES times in a row
   * (other boards on the log, docs/rules.md#postgresql-board), is a fact of the world that must not be lost: it is sent again,
   * and decided again on the state folded from the log, until the log takes it (untilRecorded). A
   * request whose client retries asks `failFast` instead and gets the LogUnwritableError or the
   * StaleVersionError at once.
   */
  input(input: I, options: InputOptions = {}): Promise<StepOutcome<S, I, D>> {
    return recordedUnlessFailFast(this.clock, options, () => this.decideOnce(input, false), this.spec.random);
  }

  /**
   * Another actor's committed decision this actor takes as its input (see `Decider.messageScopeOf`):
   * decided and retried as an input is, but only its decisions are appended, each caused by it.
   */
  message(message: Recorded<I>, options: InputOptions = {}): Promise<StepOutcome<S, I, D>> {
    return recordedUnlessFailFast(this.clock, options, () => this.decideOnce(message as unknown as I, true), this.spec.random);
  }

  /**
   * One decision of the input, decided again on a conflict (retryOnConflict): the refused append broke
   * the actor's chain, so it takes the input again on the state rehydrated from the log.
   */
  private decideOnce(input: I, message: boolean): Promise<StepOutcome<S, I, D>> {
    return retryOnConflict(async () => {
      this.waiting++;
      let outcome: StepOutcome<S, I, D> | Error;
      try {
        outcome = await query(this.ref, (replyTo) => ({ kind: 'input' as const, input, message, replyTo }), this.timeoutMs);
      } catch (error) {
        // Never taken (the actor is stopped) or not answered in time: either way it no longer waits.
        this.waiting = Math.max(0, this.waiting - 1);
        throw error;
      }
      if (outcome instanceof StaleVersionError) return outcome;
      if (outcome instanceof Error) throw outcome;
      return outcome;
    });
  }

  /** Another writer appended to these streams: drop the state and fold it again from the log. */
  async rehydrate(): Promise<void> {
    const answer = await query(this.ref, (replyTo) => ({ kind: 'rehydrate' as const, replyTo }), this.timeoutMs);
    if (answer instanceof Unhydrated) throw answer.error;
  }

  /**
   * A committed event of this actor's scope, seen on the log: one this actor did not write (another
   * process, or a one-shot command in this one) makes it rehydrate, in mailbox order.
   */
  observe(event: DomainEvent): void {
    dispatch(this.ref, { kind: 'observe', event });
  }

  /** Reads the state inside the actor, between two inputs: `read` must not keep or change it. */
  async read<R>(read: (state: S) => R): Promise<R> {
    const answer = await query(this.ref, (replyTo) => ({ kind: 'read' as const, read, replyTo }), this.timeoutMs);
    if (answer instanceof Unhydrated) throw answer.error;
    return answer as R;
  }

  /**
   * The state could not be folded for `message` (the log unreadable: its database server down): its
   * asker hears why at once, an input the store's own error (a LogUnwritableError: 507, or waited
   * out), instead of its query timing out 30 s later as a 500.
   */
  private unanswerable(message: Message<S, I, D>, error: unknown): void {
    const failure = error instanceof Error ? error : new Error(String(error));
    if (message.kind === 'input') {
      this.waiting = Math.max(0, this.waiting - 1);
      reply(message.replyTo, failure);
    } else if (message.kind !== 'observe') {
      reply(message.replyTo, new Unhydrated(failure));
    }
  }

  stop(): void {
    this.holdCommits(false);
    stop(this.ref);
  }

  /** Holds the store's group commit while inputs wait in the mailbox; lets it go once none does. */
  private holdCommits(hold: boolean): void {
    if (hold && !this.releaseCommits) this.releaseCommits = this.store.holdCommits();
    if (!hold && this.releaseCommits) {
      this.releaseCommits();
      this.releaseCommits = null;
    }
  }

  /** Folds the state from the log once the appends in flight are answered, so it includes every one that committed. */
  private async hydrate(): Promise<Held<S>> {
    this.holdCommits(false);
    await this.inFlight;
    const hydratedThrough = await this.store.headSeq();
    const state = await this.spec.hydrate(hydratedThrough);
    const tail = this.spec.guardKinds ? this.spec.tailFold : undefined;
    const committed = tail ? { state: tail.copy(state), seq: hydratedThrough } : null;
    return this.generation(state, hydratedThrough, committed);
  }

  private generation(state: S, through: number, committed: Held<S>['committed']): Held<S> {
    return { state, hydratedThrough: through, versions: new Map(), chain: new AppendChain(), knownThrough: through, committed };
  }

  /**
   * The state again from the log once the appends in flight are answered: the committed state with
   * the log's tail since it folded in (another board's events, what else was written meanwhile), or, for
   * an actor that keeps none, the whole fold (hydrate). The committed state never passes another
   * process's event of its kinds unfolded: each of its own commits that moved it on was guarded.
   */
  private async refold(held: Held<S>): Promise<Held<S>> {
    const { committed } = held;
    const tail = this.spec.tailFold;
    if (!committed || !tail) return this.hydrate();
    this.holdCommits(false);
    await this.inFlight;
    committed.seq = await tail.readAfter(committed.seq, (event) => {
      committed.state = tail.fold(committed.state, event);
    });
    return this.generation(tail.copy(committed.state), committed.seq, committed);
  }

  /** The held state once its appends in flight are answered; folded again from the log if one was refused. */
  private async settle(held: Held<S>): Promise<Held<S>> {
    // Waiting for a commit while holding it back would wait out the hold's time limit.
    this.holdCommits(false);
    await this.inFlight;
    return held.chain.broken ? this.refold(held) : held;
  }

  private async receive(held: Held<S>, message: Message<S, I, D>): Promise<Held<S>> {
    switch (message.kind) {
      case 'read': {
        const current = await this.settle(held);
        reply(message.replyTo, message.read(current.state));
        return current;
      }
      case 'rehydrate': {
        const fresh = await this.hydrate();
        reply(message.replyTo, true);
        return fresh;
      }
      case 'observe': {
        const { seq, stream, version } = message.event;
        // Folded in at hydration, or written (or read) by this actor since: nothing new.
        if (seq <= held.hydratedThrough || (held.versions.get(stream) ?? 0) >= version) return held;
        // Another writer of this process (a one-shot command) passes no guard of this actor's: its event
        // may lie behind the committed state's seq, so the state is folded anew; another process's is in the tail.
        return message.event.actor === this.store.writer ? this.hydrate() : this.refold(held);
      }
      case 'input': {
        this.waiting = Math.max(0, this.waiting - 1);
        const current = held.chain.broken ? await this.settle(held) : held;
        await this.decideAhead(current, message.input, message.replyTo, message.message);
        this.holdCommits(this.waiting > 0);
        return current;
      }
    }
  }

  /**
   * The version of a stream this actor has not written since it folded its state: the log's, when the
   * state holds every event of it. One appended after the fold (another board on the same log, docs/rules.md#postgresql-board)
   * means the state is older than the log: deciding on it and appending at the log's version would
   * record a decision taken on stale state, so the decision is refused (StaleVersionError) instead.
   */
  private async versionAsFolded(held: Held<S>, stream: string): Promise<number> {
    const version = await this.store.streamVersion(stream);
    if (version === 0) return version;
    const last = await this.store.lastOfStream(stream);
    if (last !== null && last.seq > held.hydratedThrough) {
      throw new StaleVersionError(
        stream,
        version,
        version,
        `stream ${stream} was appended to at seq ${last.seq}, after this actor's state was folded (through seq ${held.hydratedThrough}): nothing was written, it is decided again on the log as it is`,
      );
    }
    return version;
  }

  /**
   * Decides and folds the input now, and hands its append to the store without waiting for the
   * commit: the asker is answered, and `afterCommit` runs, when the commit is known, in commit order.
   */
  private async decideAhead(held: Held<S>, input: I, replyTo: ReplyTo<StepOutcome<S, I, D> | Error>, message: boolean): Promise<void> {
    let decided: DecidedAppend<S, I, D> | DecidedMessage<S, D> | null;
    const versionOf = (stream: string) => this.versionAsFolded(held, stream);
    try {
      decided = message
        ? await decideMessageAppend(this.spec.decider, held.state, input as unknown as Recorded<I>, held.versions, versionOf)
        : await decideAppend(this.spec.decider, held.state, input, held.versions, versionOf);
    } catch (error) {
      if (error instanceof StaleVersionError) {
        // Decided on state older than the log: nothing is appended; the chain breaks, so the retry
        // (retryOnConflict) takes the input again on the state folded afresh.
        held.chain.breakAt(held.chain.next().link);
        reply(replyTo, error);
        return;
      }
      // The state may hold half an input (decisions folded, never appended): the asker is told, and the
      // crash policy resets the actor, which folds its state again from the log.
      reply(replyTo, error as Error);
      throw error;
    }
    if (!decided) {
      // Answered from the state it was ignored on, in the actor's turn: nothing can change it in between.
      const unrecorded = message ? [] : (this.spec.decider.unrecorded?.(held.state, input) ?? []);
      reply(replyTo, { ok: true, state: held.state, input: null, decisions: [], ...(unrecorded.length > 0 ? { unrecorded } : {}) });
      return;
    }
    const { expected, events } = decided;
    for (const { stream } of events) held.versions.set(stream, held.versions.get(stream)! + 1);
    held.state = decided.state;
    const link = held.chain.next();
    const guard = this.spec.guardKinds ? { kinds: this.spec.guardKinds, after: held.knownThrough } : null;
    const lease = this.spec.leaseFor?.(input) ?? null;
    const answered = this.store.append({ expected, events, chain: link, ...(guard ? { guard } : {}), ...(lease ? { lease } : {}) }).then(
      (result) => {
        if (!result.ok) return reply(replyTo, result.conflict);
        // Committed past its guard: nobody else's event of those kinds came before it, so the state holds all through it.
        if (guard) held.knownThrough = Math.max(held.knownThrough, result.events.at(-1)?.seq ?? 0);
        const { committed } = held;
        const tail = this.spec.tailFold;
        if (committed && tail) {
          // In commit order; nobody else's event of its kinds lies between (the guard): the committed state moves on to its last seq.
          for (const event of result.events) committed.state = tail.fold(committed.state, event as DomainEvent);
          committed.seq = Math.max(committed.seq, result.events.at(-1)?.seq ?? 0);
        }
        // A message is in the log already: the append holds its decisions only.
        const { input: recordedInput, decisions } = message
          ? { input: input as unknown as Recorded<I>, decisions: result.events as readonly Recorded<D>[] }
          : recorded<I, D>(result.events);
        reply(replyTo, { ok: true, state: held.state, input: recordedInput, decisions });
        try {
          this.spec.afterCommit?.(held.state, decisions, recordedInput);
        } catch (error) {
          // The decisions are committed; whatever the effects did not do, a fold from the log will see.
          held.chain.breakAt(link.link);
          console.error(`actor ${this.spec.name}: acting on committed decisions failed`, error);
        }
      },
      (error: Error) => reply(replyTo, error),
    );
    this.inFlight = Promise.all([this.inFlight, answered]).then(() => undefined);
  }
}

/** The answer to a read or a rehydrate whose state could not be folded: thrown to its asker. */
class Unhydrated {
  constructor(readonly error: Error) {}
}
