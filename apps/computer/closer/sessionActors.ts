import { createHash } from 'node:crypto';
import type { SessionInput } from '../../../actors/session/decideSession.ts';
import { sessionDecider } from '../../../actors/session/sessionDecider.ts';
import type { SessionClose } from '../../../actors/session/sessionState.ts';
import type { DomainEvent } from '../../../events/catalog.ts';
import { decideAndAppend, onlyStreamsRead } from '../../../runtime/actors/decideAndAppend.ts';
import { retryOnConflict } from '../../../runtime/actors/retryOnConflict.ts';
import { type ActorRef, type ActorSystem, child, query, type ReplyTo, reply, stop } from '../../../runtime/actors/runtime.ts';
import type { EventStore } from '../../../runtime/store/eventStore.ts';
import { sessionStream } from './sessionStreams.ts';

/** Actor names are at most 128 characters; a computer's id and a session's key can be 64 each. */
function actorName(computer: string, key: string): string {
  const name = `session-${computer}-${key}`;
  return name.length <= 128 ? name : `session-${createHash('sha256').update(name).digest('hex').slice(0, 40)}`;
}

/**
 * Builds an input from the session's state as just read from its stream, or null for none. It runs
 * inside the actor, after the read and before the append: whatever it reads outside (is a claim's
 * process alive?) is recorded in the input, and it is asked again when another process appended first.
 */
export type InputFrom = (state: Readonly<SessionClose>, at: number) => SessionInput | null;

export interface SessionStep {
  readonly state: SessionClose;
  /** The input as recorded, or null when none was built or the decider ignored it (then nothing was written). */
  readonly input: DomainEvent | null;
  readonly decisions: readonly DomainEvent[];
}

type Message =
  | { readonly kind: 'step'; readonly build: InputFrom; readonly replyTo: ReplyTo<SessionStep | Error> }
  | { readonly kind: 'read'; readonly replyTo: ReplyTo<SessionClose | Error> };

interface Held {
  state: SessionClose;
  version: number;
}

const QUERY_TIMEOUT_MS = 30_000;
const PASSIVATE_AFTER_MS = 10 * 60_000;

/**
 * One actor per session of a computer, the only writer of `<computer>/session:<key>` in its process.
 * Another process (a second round, `runledger tick`) may write the same stream, so every step first
 * reads what was appended since, then appends at the version it read: the transaction that finds a
 * close open is the one that claims it, and a stale step is decided again on the fresh state.
 */
export class SessionActors {
  private readonly refs = new Map<string, ActorRef<Message>>();

  constructor(
    private readonly system: ActorSystem,
    private readonly store: EventStore,
    readonly computer: string,
    private readonly now: () => number,
    private readonly afterCommit: (key: string, state: SessionClose, decisions: readonly DomainEvent[]) => void = () => {
      // nobody to tell by default
    },
  ) {}

  /** Reads the session on, builds an input from it and, unless ignored, records it with its decisions. */
  async step(key: string, build: InputFrom): Promise<SessionStep> {
    const outcome = await query(this.ref(key), (replyTo) => ({ kind: 'step' as const, build, replyTo }), QUERY_TIMEOUT_MS);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  /** The session's close as of its stream's end. */
  async state(key: string): Promise<SessionClose> {
    const outcome = await query(this.ref(key), (replyTo) => ({ kind: 'read' as const, replyTo }), QUERY_TIMEOUT_MS);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  /**
   * Stops every session actor this process spawned. Stopping the actor system is not enough: nact
   * leaves a passivation timer of each running, which keeps a one-shot process (`runledger tick`) alive.
   */
  stop(): void {
    for (const ref of this.refs.values()) stop(ref);
    this.refs.clear();
  }

  private ref(key: string): ActorRef<Message> {
    const ref = child<Held, Message>(this.system, actorName(this.computer, key), {
      hydrate: () => ({ state: sessionDecider.initialState(key), version: 0 }),
      receive: (held, message) => this.receive(key, held, message),
      passivateAfterMs: PASSIVATE_AFTER_MS,
    });
    this.refs.set(key, ref);
    return ref;
  }

  private async receive(key: string, held: Held, message: Message): Promise<Held> {
    try {
      if (message.kind === 'read') {
        await this.readOn(key, held);
        reply(message.replyTo, structuredClone(held.state));
        return held;
      }
      reply(message.replyTo, await this.decide(key, held, message.build));
    } catch (error) {
      reply(message.replyTo, error as Error);
      // Whatever failed, the next message starts from the log again.
      return { state: sessionDecider.initialState(key), version: 0 };
    }
    return held;
  }

  /** Each attempt reads the stream on first: a stale one is decided again on what the log has now. */
  private decide(key: string, held: Held, build: InputFrom): Promise<SessionStep> {
    const stream = sessionStream(this.computer, key);
    return retryOnConflict(async () => {
      await this.readOn(key, held);
      const input = build(held.state, this.now());
      if (input === null) return { state: structuredClone(held.state), input: null, decisions: [] };
      if (input.stream !== stream) throw new Error(`session ${key}'s actor writes only ${stream}, not ${input.stream}`);
      // Decided on a copy: a refused append leaves the state as the log has it.
      const versions = new Map([[stream, held.version]]);
      const outcome = await decideAndAppend(this.store, sessionDecider, structuredClone(held.state), input, versions, onlyStreamsRead);
      if (!outcome.ok) return outcome.conflict;
      if (outcome.input === null) return { state: structuredClone(held.state), input: null, decisions: [] };
      held.state = outcome.state;
      held.version = versions.get(stream)!;
      if (outcome.decisions.length) this.afterCommit(key, held.state, outcome.decisions);
      return { state: structuredClone(held.state), input: outcome.input, decisions: outcome.decisions };
    });
  }

  /** Folds what was appended to the stream since this actor last read or wrote it. */
  private async readOn(key: string, held: Held): Promise<void> {
    for (const event of await this.store.readStream(sessionStream(this.computer, key), held.version)) {
      held.state = sessionDecider.evolve(held.state, event);
      held.version = event.version;
    }
  }
}
