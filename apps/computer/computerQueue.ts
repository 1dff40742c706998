import type { Subscription } from 'rxjs';
import type { QueueDecision, QueueInput } from '../../actors/lane/decideQueue.ts';
import { type HandledLookup, handledOf, readsHandled } from '../../actors/lane/handledRun.ts';
import { queueDecider } from '../../actors/lane/queueDecider.ts';
import { initialQueueState, type QueueState } from '../../actors/lane/queueState.ts';
import type { DomainEvent, NewEventOf } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import type { RunStart } from '../../events/queueEvents.ts';
import { wordQueueReason } from '../../events/queueReasons.ts';
import { queueProjection } from '../../projections/queue.ts';
import { type Clock, wakeAt } from '../../runtime/actors/clock.ts';
import type { Recorded, StepOutcome } from '../../runtime/actors/decideAndAppend.ts';
import { DecidingActor } from '../../runtime/actors/decidingActor.ts';
import { Outbox } from '../../runtime/actors/outbox.ts';
import type { ActorSystem } from '../../runtime/actors/runtime.ts';
import { type FailureLog, stderrLog, unrecorded } from '../../runtime/actors/untilRecorded.ts';
import { hydrateStates } from '../../runtime/folds/hydrate.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { type BoardClaims, type ClaimAnswer, type ClaimEffect, claimConsumer, type GrantedClaim } from './claimConsumer.ts';

/** What the queue's decisions ask of the world beyond claims (acks on the stream, starting a run). */
export interface QueueEffects {
  acknowledge?(frameId: string | null, status: number, reason: string): void;
  /**
   * A claim was granted: the run starts, with the budget the board gave it (null: the default), or,
   * when its answer was refused (`invalid` names the field), is completed as failed with that reason.
   */
  claimed?(claimed: Recorded<NewEventOf<'run.claimed'>>, answer: { run?: { prompt: string; timeoutS: number | null }; invalid?: string }): void;
  /**
   * What a granted run of `lane` will start with, as the host reads it now (its budget, its lane's
   * session): recorded with the claim's answer, so the queue's `run.claimed` carries it to the run.
   */
  startOf?(lane: string, timeoutS: number | null, asked?: { repo?: string; base?: string }): RunStart;
  /** A run that waited out its login's usage limit has a slot again (`run.limit.resumed`): it runs again. */
  limitOver?(runId: string): void;
  /** Where an input sent without waiting (a timer's) is told when it could not be recorded; stderr by default. */
  log?: FailureLog;
}

/**
 * One computer's queue as an actor: every input (frame, claim answer, timer) is appended with the
 * decisions taken from it before anything happens; effects follow the commit. The actor hydrates from
 * the queue projection, so a crash (reset) or a restart of the daemon resumes from the log.
 */
export class ComputerQueue {
  private readonly actor: DecidingActor<QueueState, QueueInput, QueueDecision>;
  private readonly outbox: Outbox<ClaimEffect>;
  private readonly timers = new Map<string, () => void>();
  /** Runs whose wake-up fired and is being recorded (retried while the log cannot take it). */
  private readonly waking = new Set<string>();
  private following: Subscription | null = null;
  /** Claims are performed only once the outbox has settled what the last process left. */
  private opened = false;

  constructor(
    system: ActorSystem,
    private readonly store: EventStore,
    private readonly clock: Clock,
    readonly computer: string,
    board: BoardClaims,
    private readonly effects: QueueEffects = {},
    granted?: (claim: GrantedClaim) => void,
  ) {
    this.outbox = new Outbox(
      store,
      claimConsumer(computer, board, (answer) => this.answerClaim(answer), granted),
      clock,
    );
    this.actor = new DecidingActor(system, store, {
      name: `computer-${computer}`,
      decider: queueDecider,
      clock,
      hydrate: () => this.hydrate(),
      afterCommit: (_state, decisions, input) => this.afterCommit(decisions, input),
    });
  }

  /**
   * Records `first` (this life's `computer.started`), then settles claims a previous process left half
   * done, then follows the log for new ones. First, so that an answer to a claim of the last life is
   * decided in this one (no longer draining); the claims it decides wait for the outbox to open.
   * `lifeFrom`: the log's head before this life wrote anything (read at `open` when not given).
   */
  async start(first?: QueueInput, lifeFrom?: number): Promise<void> {
    const from = lifeFrom ?? (await this.store.headSeq());
    if (first) await this.input(first);
    await this.outbox.open(undefined, from);
    this.opened = true;
    // Waits for the actor to have taken what came before (a read in its turn), copying nothing.
    await this.actor.read(() => null);
    this.following = this.outbox.follow();
  }

  /**
   * A frame that reads whether its run was handled here is recorded with what the shell found of it
   * (see HandledLookup): `live` in the queue, else from the run's events in the log (indexed). One whose
   * run settled between the look and the decision is ignored (`racedFrame`): looked at again.
   */
  async input(input: QueueInput): Promise<StepOutcome<QueueState, QueueInput, QueueDecision>> {
    if (input.type !== 'frame.received' || input.data.handled !== undefined || !readsHandled(input.data)) return this.actor.input(input);
    const { runId } = input.data;
    for (;;) {
      const live = await this.actor.read((queue) => queue.runs[runId] !== undefined);
      const handled: HandledLookup = live ? 'live' : handledOf(await this.store.readEntity(`run:${runId}`), this.computer, runId);
      const outcome = await this.actor.input({ ...input, data: { ...input.data, handled } });
      if (outcome.ok && outcome.input === null && live) continue;
      return outcome;
    }
  }

  /**
   * A run's committed end (`run.settled`, or a paused completion): the queue's input as it is (docs/rules.md#actors),
   * deciding the run's end there and what starts next; nothing is appended but those decisions.
   */
  message(ended: Recorded<NewEventOf<'run.settled' | 'run.completion.paused'>>): Promise<StepOutcome<QueueState, QueueInput, QueueDecision>> {
    return this.actor.message(ended);
  }

  /** What `read` takes of the queue as of now, in the actor's turn: the live state, to copy what is kept. */
  read<R>(read: (queue: Readonly<QueueState>) => R): Promise<R> {
    return this.actor.read(read);
  }

  /** A copy of the queue as of now, for `status` and tests. */
  state(): Promise<QueueState> {
    return this.actor.read((queue) => structuredClone(queue));
  }

  /** How many runs have a claim in flight: the board still owes them an answer. */
  claimsInFlight(): Promise<number> {
    return this.actor.read((queue) => Object.values(queue.runs).filter((run) => run.status === 'claiming').length);
  }

  /** Performs the claims taken so far; resolves with how many. */
  drainClaims(): Promise<number> {
    return this.outbox.drain();
  }

  stop(): void {
    this.following?.unsubscribe();
    this.outbox.stop();
    for (const cancel of this.timers.values()) cancel();
    this.actor.stop();
  }

  private async hydrate(): Promise<QueueState> {
    const [queues] = await hydrateStates(this.store, [queueProjection]);
    const queue = queues[this.computer] ?? initialQueueState();
    // A wait whose wake-up is being recorded is not armed again: a fold after every failed append (a full
    // disk) would otherwise fire it at once, and again, each firing one more input that fails in turn.
    for (const run of Object.values(queue.runs))
      if (!this.waking.has(run.runId)) this.armTimer(`${this.computer}/lane:${run.lane}`, run.runId, run.notBefore);
    const now = this.clock.now();
    for (const [login, limit] of Object.entries(queue.loginLimits ?? {})) if (limit.until > now) this.armLoginTimer(login, limit.until);
    return queue;
  }

  private afterCommit(decisions: readonly DomainEvent[], input: DomainEvent): void {
    let claims = false;
    for (const decision of decisions) {
      switch (decision.type) {
        case 'frame.acknowledged':
          this.effects.acknowledge?.(decision.data.frameId, decision.data.status, wordQueueReason(decision.data.reason));
          break;
        case 'run.claim.started':
          claims = true;
          break;
        case 'run.parked':
        case 'run.claim.retrying':
          this.armTimer(decision.stream, decision.data.runId, decision.data.notBefore);
          break;
        case 'run.limit.waiting':
          this.armTimer(decision.stream, decision.data.runId, decision.data.notBefore);
          // The login's own wake-up: its other runs start then even if this one is cancelled meanwhile.
          this.armLoginTimer(decision.data.login, decision.data.notBefore);
          break;
        case 'run.limit.resumed':
          this.effects.limitOver?.(decision.data.runId);
          break;
        case 'run.claimed':
          if (input.type === 'claim.answered') this.effects.claimed?.(decision, input.data);
          break;
        default:
          break;
      }
    }
    if (claims && this.opened) void this.outbox.drain();
  }

  /** A waiting run with a `notBefore` is woken by a timer input then, never before (see wakeAt); cheap to re-arm. */
  private armTimer(stream: string, runId: string, notBefore: number): void {
    this.timers.get(runId)?.();
    this.timers.delete(runId);
    if (notBefore <= 0) return;
    const cancel = wakeAt(this.clock, notBefore, (at) => {
      this.timers.delete(runId);
      const input: QueueInput = { stream, type: 'timer.fired', data: { runId }, at };
      this.waking.add(runId);
      void this.input(input)
        .catch(unrecorded(this.effects.log ?? stderrLog, input))
        .finally(() => this.waking.delete(runId));
    });
    this.timers.set(runId, cancel);
  }

  /** A login's usage limit lifts at `until`: one `login.limit.due` then (see wakeAt), re-armed by a later limit. */
  private armLoginTimer(login: string, until: number): void {
    const key = `login:${login}`;
    this.timers.get(key)?.();
    const stream = `${this.computer}/computer:${this.computer}`;
    this.timers.set(
      key,
      wakeAt(this.clock, until, (at) => {
        this.timers.delete(key);
        const input: QueueInput = { stream, type: 'login.limit.due', data: { login }, at };
        void this.input(input).catch(unrecorded(this.effects.log ?? stderrLog, input));
      }),
    );
  }

  private async answerClaim({ stream, ...answer }: ClaimAnswer): Promise<void> {
    // Read as the answer is recorded, and recorded with it: what the run's start reads (docs/rules.md#the-log).
    const run = answer.invalid === undefined ? answer.run : undefined;
    const asked = run ? { ...(run.repo ? { repo: run.repo } : {}), ...(run.base ? { base: run.base } : {}) } : {};
    const start = run ? this.effects.startOf?.(parseStream(stream).id, run.timeoutS, asked) : undefined;
    await this.input({ stream, type: 'claim.answered', data: start ? { ...answer, start } : answer, at: this.clock.now() });
  }
}
