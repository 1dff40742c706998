import type { DomainEvent, NewDomainEvent } from '../events/catalog.ts';
import { type EventStore, StaleVersionError } from '../events/store/eventStore.ts';
import type { StepOutcome } from './decideAndAppend.ts';
import type { Decider } from './decider.ts';
import { type ActorRef, type ActorSystem, type ReplyTo, dispatch, query, reply, spawnActor, stop } from './runtime.ts';
import { stepInActor } from './stepInActor.ts';

type Message<S> =
  | { readonly kind: 'input'; readonly input: NewDomainEvent; readonly replyTo: ReplyTo<StepOutcome<S> | Error> }
  | { readonly kind: 'read'; readonly read: (state: S) => unknown; readonly replyTo: ReplyTo<unknown> }
  | { readonly kind: 'rehydrate'; readonly replyTo: ReplyTo<true> }
  | { readonly kind: 'observe'; readonly event: DomainEvent };

/** A refused append is retried this many times, each against the state rehydrated from the log. */
const CONFLICT_RETRIES = 3;

interface Held<S> {
  state: S;
  /** Every event up to this seq was in the log when the state was folded from it. */
  readonly hydratedThrough: number;
  /** Each stream's version as this actor last wrote or read it: the expected version of its next append. */
  readonly versions: Map<string, number>;
}

export interface DecidingActorSpec<S> {
  readonly name: string;
  readonly decider: Decider<S>;
  /** Builds the state from the log (a projection's checkpoint and tail): on start and after a crash. */
  readonly hydrate: () => Promise<S>;
  /** Effects of committed decisions; never called for a refused append. */
  readonly afterCommit?: (state: S, decisions: readonly DomainEvent[], input: DomainEvent) => void;
  readonly queryTimeoutMs?: number;
}

/**
 * An actor whose every message is an input: appended with the decisions taken from it before anything
 * else happens, one message at a time. A refused append (another writer got there first) or any
 * failure resets the actor, which then rehydrates from the log.
 */
export class DecidingActor<S> {
  private readonly ref: ActorRef<Message<S>>;
  private readonly timeoutMs: number;

  constructor(system: ActorSystem, private readonly store: EventStore, private readonly spec: DecidingActorSpec<S>) {
    this.timeoutMs = spec.queryTimeoutMs ?? 30_000;
    this.ref = spawnActor<Held<S>, Message<S>>(system, spec.name, {
      hydrate: () => this.hydrate(),
      receive: (held, message) => this.receive(held, message),
    });
  }

  /** Records the input and the decisions taken from it; resolves once they are committed. */
  async input(input: NewDomainEvent): Promise<StepOutcome<S>> {
    for (let attempt = 0; ; attempt++) {
      const outcome = await query(this.ref, (replyTo) => ({ kind: 'input' as const, input, replyTo }), this.timeoutMs);
      if (outcome instanceof StaleVersionError && attempt < CONFLICT_RETRIES) continue;
      if (outcome instanceof Error) throw outcome;
      return outcome as StepOutcome<S>;
    }
  }

  /** Another writer appended to these streams: drop the state and fold it again from the log. */
  async rehydrate(): Promise<void> {
    await query(this.ref, (replyTo) => ({ kind: 'rehydrate' as const, replyTo }), this.timeoutMs);
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
    return (await query(this.ref, (replyTo) => ({ kind: 'read' as const, read, replyTo }), this.timeoutMs)) as R;
  }

  stop(): void {
    stop(this.ref);
  }

  private async hydrate(): Promise<Held<S>> {
    const hydratedThrough = await this.store.headSeq();
    return { state: await this.spec.hydrate(), hydratedThrough, versions: new Map() };
  }

  private async receive(held: Held<S>, message: Message<S>): Promise<Held<S>> {
    if (message.kind === 'read') {
      reply(message.replyTo, message.read(held.state));
      return held;
    }
    if (message.kind === 'rehydrate') {
      const fresh = await this.hydrate();
      reply(message.replyTo, true);
      return fresh;
    }
    if (message.kind === 'observe') {
      const { seq, stream, version } = message.event;
      // Folded in at hydration, or written (or read) by this actor since: nothing new.
      if (seq <= held.hydratedThrough || (held.versions.get(stream) ?? 0) >= version) return held;
      return this.hydrate();
    }
    const outcome = await stepInActor(this.store, this.spec.decider, held, message.input, message.replyTo);
    if (outcome.input) this.spec.afterCommit?.(held.state, outcome.decisions, outcome.input);
    return held;
  }
}
