import type { Subscription } from 'rxjs';
import type { Clock } from '../../events/clock.ts';
import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import type { EventStore } from '../../events/store/eventStore.ts';
import { hydrateProjections } from '../../projections/hydrate.ts';
import { queueProjection } from '../../projections/queue.ts';
import { type StepOutcome, decideAndAppend } from '../decideAndAppend.ts';
import { Outbox } from '../outbox/outbox.ts';
import { queueDecider } from '../queue/queueDecider.ts';
import { type QueueState, initialQueueState } from '../queue/queueState.ts';
import {
  type ActorRef, type ActorSystem, type ReplyTo, query, reply, spawnActor, stop,
} from '../runtime.ts';
import { type BoardClaims, type ClaimAnswer, type GrantedClaim, claimConsumer } from './claimConsumer.ts';

/** What the queue's decisions ask of the world beyond claims (acks on the stream, starting a run). */
export interface QueueEffects {
  acknowledge?(frameId: string | null, status: number, reason: string): void;
  /** A claim was granted: the run starts, with the budget the board gave it (null: the default). */
  claimed?(runId: string, lane: string, timeoutS: number | null): void;
}

type Message =
  | { readonly kind: 'input'; readonly input: NewDomainEvent; readonly replyTo: ReplyTo<StepOutcome<QueueState> | Error> }
  | { readonly kind: 'state'; readonly replyTo: ReplyTo<QueueState> };

interface ActorState {
  queue: QueueState;
  /** The version of each stream as this actor last wrote or read it: the expected version of its next append. */
  readonly versions: Map<string, number>;
  readonly timers: Map<string, () => void>;
}

const QUERY_TIMEOUT_MS = 30_000;

/**
 * One computer's queue as an actor: every input (frame, claim answer, timer) is appended with the
 * decisions taken from it before anything happens; effects follow the commit. The actor hydrates from
 * the queue projection, so a crash (reset) or a restart of the daemon resumes from the log.
 */
export class ComputerQueue {
  private readonly ref: ActorRef<Message>;
  private readonly outbox: Outbox<string>;
  private following: Subscription | null = null;

  constructor(
    private readonly system: ActorSystem,
    private readonly store: EventStore,
    private readonly clock: Clock,
    readonly computer: string,
    board: BoardClaims,
    private readonly effects: QueueEffects = {},
    granted?: (claim: GrantedClaim) => void,
  ) {
    this.outbox = new Outbox(store, claimConsumer(computer, board, (answer) => this.answerClaim(answer), granted), () => clock.now());
    this.ref = spawnActor<ActorState, Message>(system, `computer-${computer}`, {
      hydrate: () => this.hydrate(),
      receive: (state, message) => this.receive(state, message),
    });
  }

  /** Settles claims a previous process left half done, then follows the log for new ones. */
  async start(): Promise<void> {
    await this.outbox.open();
    await this.state();
    this.following = this.outbox.follow();
  }

  /** Records an input and the decisions taken from it; resolves once they are committed. */
  async input(input: NewDomainEvent): Promise<StepOutcome<QueueState>> {
    const outcome = await query(this.ref, (replyTo) => ({ kind: 'input', input, replyTo }), QUERY_TIMEOUT_MS);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  /** A copy of the queue as of now, for `status` and tests. */
  async state(): Promise<QueueState> {
    return query(this.ref, (replyTo) => ({ kind: 'state', replyTo }), QUERY_TIMEOUT_MS);
  }

  /** Performs the claims taken so far; resolves with how many. */
  drainClaims(): Promise<number> {
    return this.outbox.drain();
  }

  stop(): void {
    this.following?.unsubscribe();
    stop(this.ref);
  }

  private stream(kind: 'run' | 'computer', id: string): string {
    return `${this.computer}/${kind}:${id}`;
  }

  private async hydrate(): Promise<ActorState> {
    const folded = await hydrateProjections(this.store, [queueProjection]);
    const all = folded.get(queueProjection.name)!.state as Record<string, QueueState>;
    const state: ActorState = { queue: all[this.computer] ?? initialQueueState(), versions: new Map(), timers: new Map() };
    for (const run of Object.values(state.queue.runs)) this.armTimer(state, run.runId, run.notBefore);
    return state;
  }

  private async receive(state: ActorState, message: Message): Promise<ActorState> {
    if (message.kind === 'state') {
      reply(message.replyTo, structuredClone(state.queue));
      return state;
    }
    let outcome: StepOutcome<QueueState>;
    try {
      outcome = await decideAndAppend(this.store, queueDecider, state.queue, message.input, state.versions, (s) => this.store.streamVersion(s));
    } catch (error) {
      reply(message.replyTo, error as Error);
      throw error;
    }
    if (!outcome.ok) {
      reply(message.replyTo, outcome.conflict);
      // The state was folded ahead of the refused commit: reset, and rehydrate from the log.
      throw outcome.conflict;
    }
    state.queue = outcome.state;
    reply(message.replyTo, outcome);
    this.afterCommit(state, outcome.decisions, outcome.input);
    return state;
  }

  private afterCommit(state: ActorState, decisions: readonly DomainEvent[], input: DomainEvent | null): void {
    let claims = false;
    for (const decision of decisions) {
      switch (decision.type) {
        case 'frame.acknowledged':
          this.effects.acknowledge?.(decision.data.frameId, decision.data.status, decision.data.reason);
          break;
        case 'run.claim.started':
          claims = true;
          break;
        case 'run.parked':
        case 'run.claim.retrying':
          this.armTimer(state, decision.data.runId, decision.data.notBefore);
          break;
        case 'run.claimed':
          this.effects.claimed?.(decision.data.runId, decision.data.lane, input?.type === 'claim.answered' ? (input.data.run?.timeoutS ?? null) : null);
          break;
        default:
          break;
      }
    }
    if (claims) void this.outbox.drain();
  }

  /** A waiting run with a `notBefore` is woken by a timer input then; a timer is cheap to re-arm. */
  private armTimer(state: ActorState, runId: string, notBefore: number): void {
    state.timers.get(runId)?.();
    state.timers.delete(runId);
    if (notBefore <= 0) return;
    const cancel = this.clock.after(notBefore - this.clock.now(), () => {
      state.timers.delete(runId);
      void this.input({ stream: this.stream('run', runId), type: 'timer.fired', data: { runId }, at: this.clock.now() }).catch(() => {});
    });
    state.timers.set(runId, cancel);
  }

  private async answerClaim(answer: ClaimAnswer): Promise<void> {
    await this.input({ stream: this.stream('run', answer.runId), type: 'claim.answered', data: answer, at: this.clock.now() });
  }
}
