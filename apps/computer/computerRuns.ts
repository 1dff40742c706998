import type { Subscription } from 'rxjs';
import * as z from 'zod';
import { DEFAULT_TIMEOUT_S } from '../../actors/run/budget.ts';
import type { RunInput } from '../../actors/run/decideRun.ts';
import type { RunExecution } from '../../actors/run/runState.ts';
import type { AgentHandle } from '../../adapters/agent/agentProcess.ts';
import { findStrays } from '../../adapters/agent/strays.ts';
import { closeIdleWorktrees } from '../../adapters/git/idleWorktrees.ts';
import { NO_REPOSITORIES, type Repositories } from '../../adapters/git/repositories.ts';
import type { BoardAnswer } from '../../adapters/http/boardClient.ts';
import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import type { RunStart } from '../../events/queueEvents.ts';
import { messageOf } from '../../events/thrown.ts';
import { executionsProjection } from '../../projections/executions.ts';
import { laneSessionsProjection } from '../../projections/laneSessions.ts';
import { type Clock, wakeAt } from '../../runtime/actors/clock.ts';
import { Outbox } from '../../runtime/actors/outbox.ts';
import { groupAlive } from '../../runtime/actors/processes.ts';
import type { ActorSystem } from '../../runtime/actors/runtime.ts';
import { type FailureLog, stderrLog, unrecorded } from '../../runtime/actors/untilRecorded.ts';
import { hydrateStates } from '../../runtime/folds/hydrate.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { runTokenIn } from './claimConsumer.ts';
import { RunActors } from './runActor.ts';
import {
  agentSettingsOf,
  claimIncarnation,
  completionConsumer,
  killConsumer,
  pushConsumer,
  type RunEffectsContext,
  type RunToken,
  spawnConsumer,
  workspaceConsumer,
} from './runEffects.ts';

/**
 * A run's progress reaches the board on its heartbeat. Heartbeats go every 30 s, so a change of it
 * also sends one at once, at most one a second per run: the latest line always goes, in a second or
 * less, and a chatty agent costs the board one request a second, not one per event.
 */
export const PROGRESS_BEAT_MS = 1_000;

/** A heartbeat's answer that asks the run to stop (docs/rules.md#wire-and-cli: `{cancel_requested: true}`). */
const CancelRequested = z.object({ cancel_requested: z.literal(true) });

/** A run's decision that ends its hold on its slot and lane, as committed. */
export type RunEnd = Extract<DomainEvent, { type: 'run.settled' | 'run.completion.paused' }>;

export interface ComputerRunsOptions {
  readonly system: ActorSystem;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly computer: string;
  readonly exec: string;
  readonly workspaceRoot: string;
  /** The repositories its lanes work in (`--repo`); none by default (plain folders). */
  readonly repos?: Repositories;
  /** `--push`: lanes' branches pushed to `origin` after each turn that changed them. */
  readonly push?: boolean;
  /** `--worktree-idle-days`: worktrees of lanes idle this long are closed (none: kept). */
  readonly worktreeIdleMs?: number;
  /** The daemon's narration, for what it does on its own (an idle worktree closed). */
  readonly say?: (line: string) => void;
  /** The budget of runs that carry none (`--timeout-s`); 0 = none. */
  readonly defaultTimeoutS?: number;
  readonly heartbeatMs?: number;
  readonly killGraceMs?: number;
  /** The budget sentence ahead of each prompt; on by default (`--budget-note off` leaves the prompt as given). */
  readonly budgetNote?: boolean;
  /** The board's calls a run makes: its effects' (reply, complete), and a claim for its token and its heartbeats. */
  readonly board: RunEffectsContext['board'] & {
    claim(runId: string, incarnation?: string): Promise<BoardAnswer>;
    heartbeat(runId: string, token: string, progress?: string): Promise<BoardAnswer>;
  };
  /** Where an input sent without waiting (an agent's exit, a timer's) is told when it could not be recorded; stderr by default. */
  readonly log?: FailureLog;
  /** Test seam (the simulator's agent processes): how an agent is started. */
  readonly startAgent?: RunEffectsContext['startAgent'];
  /** Hands the queue a run's committed end (its settle, or its paused completion): it no longer needs its slot and lane. */
  readonly ended: (ended: RunEnd) => Promise<unknown>;
  /** Tells the queue a run's agent stopped at its login's usage limit: the queue decides when it runs again. */
  readonly limitReached?: (runId: string, lane: string, limit: { words: string; resetAt?: number }) => Promise<void>;
}

/**
 * The claimed runs of one computer: their actors, the effects their decisions ask for (spawn, kill,
 * complete, each from its own outbox), and the heartbeat loop that keeps every unsettled run's lease.
 */
export class ComputerRuns {
  private readonly actors: RunActors;
  private readonly tokens = new Map<string, string>();
  private readonly handles = new Map<string, AgentHandle>();
  /** Runs claimed and not yet settled: every one of them is heartbeated. */
  private readonly live = new Set<string>();
  private readonly endedForQueue = new Set<string>();
  /** Where each unsettled run stands, as its actor last decided: effects check it before acting. */
  private readonly phases = new Map<string, RunExecution['phase']>();
  /** The prompt a claim carried, until the run's process is spawned (after a restart: read back from the log). */
  private readonly prompts = new Map<string, string>();
  /** Each unsettled run's lane: where its claim, and the life that made it, are recorded. */
  private readonly lanes = new Map<string, string>();
  /** The session each lane's next turn resumes. */
  private laneSessions: Record<string, string> = {};
  private readonly timers = new Map<string, () => void>();
  /** Each live run's latest progress line (kept in memory only), and when its last extra beat went. */
  private readonly progress = new Map<string, string>();
  private readonly progressBeats = new Map<string, { lastAt: number; cancel: (() => void) | null; inFlight: boolean; sent: string | null }>();
  private readonly outboxes: Outbox<DomainEvent>[];
  private readonly subscriptions: Subscription[] = [];
  private stopHeartbeats: (() => void) | null = null;
  private idleTimer: (() => void) | null = null;
  private stopped = false;
  private started = false;
  private draining = false;
  private readonly failures: FailureLog;

  constructor(private readonly options: ComputerRunsOptions) {
    const { system, store, computer, clock } = options;
    this.failures = options.log ?? stderrLog;
    this.actors = new RunActors(system, store, computer, (runId, run, decisions) => this.afterCommit(runId, run, decisions), clock);
    const ctx: RunEffectsContext = {
      computer,
      store,
      clock,
      ...agentSettingsOf(options),
      workspaceRoot: options.workspaceRoot,
      repos: options.repos ?? NO_REPOSITORIES,
      push: options.push === true,
      handles: this.handles,
      input: (runId, input) => this.input(runId, input),
      runToken: (runId) => this.tokenOrGone(runId),
      phaseOf: (runId) => this.phases.get(runId) ?? null,
      promptOf: (runId) => this.prompts.get(runId) ?? null,
      board: options.board,
      log: this.failures,
      progress: (runId, line) => this.progressChanged(runId, line),
      ...(options.startAgent ? { startAgent: options.startAgent } : {}),
    };
    this.outboxes = [workspaceConsumer(ctx), spawnConsumer(ctx), killConsumer(ctx), pushConsumer(ctx), completionConsumer(ctx)].map(
      (c) => new Outbox(store, c, clock),
    );
  }

  /** Remembers the run token a claim returned: it is never written to the log. */
  rememberToken(runId: string, token: string): void {
    this.tokens.set(runId, token);
  }

  input(runId: string, input: RunInput) {
    return this.actors.input(runId, input);
  }

  /**
   * The queue claimed a run (`run.claimed`, committed): it starts now, with the budget and lane's
   * session its claim's answer recorded. While the daemon drains it never starts (a claim that was in
   * flight when the drain began can still be granted): it is completed with the shutdown marker instead.
   */
  async claimed(claimed: Extract<DomainEvent, { type: 'run.claimed' }>, prompt: string): Promise<void> {
    const { runId, lane } = claimed.data;
    if (await this.shutDownBeforeStart(runId, lane)) return;
    this.prompts.set(runId, prompt);
    // Its queue's committed decision is the run's input (docs/rules.md#actors): nothing is appended but what it decides.
    await this.actors.message(runId, claimed);
  }

  /**
   * A run whose queue's claim carries no `start` (an older version recorded it, and stopped before the
   * hand-over): handed over by an input of its own, with what the host reads now, as that version did.
   */
  async handOver(runId: string, lane: string, run: { prompt: string; timeoutS: number | null }): Promise<void> {
    if (await this.shutDownBeforeStart(runId, lane)) return;
    const { budgetS, laneSession } = this.startOf(lane, run.timeoutS);
    this.prompts.set(runId, run.prompt);
    const data = { runId, lane, budgetS, laneSession };
    await this.input(runId, { stream: this.stream(runId), type: 'run.handed.over', data, at: this.options.clock.now() });
  }

  /**
   * What a run of `lane` starts with, as read now: its budget (the board's, else the default), its lane's
   * session, and the repository it works in (its own, else this computer's default; none: a plain folder).
   */
  startOf(lane: string, timeoutS: number | null, asked: { repo?: string; base?: string } = {}): RunStart {
    const start = { budgetS: timeoutS ?? this.options.defaultTimeoutS ?? DEFAULT_TIMEOUT_S, laneSession: this.laneSessions[lane] ?? null };
    const repo = asked.repo ?? this.options.repos?.defaultName ?? null;
    if (repo === null && asked.base === undefined) return start;
    return {
      ...start,
      workspace: { repo, ...(asked.base === undefined ? {} : { base: asked.base }), ...(this.options.push ? { push: true as const } : {}) },
    };
  }

  /** Holds the granted run here; while the daemon drains it never starts, and is completed with the shutdown marker (true). */
  private async shutDownBeforeStart(runId: string, lane: string): Promise<boolean> {
    this.live.add(runId);
    this.lanes.set(runId, lane);
    if (!this.draining) return false;
    // Its lane recorded: its queue reads this run's end from its settle (RunExecution.endTold).
    await this.input(runId, { stream: this.stream(runId), type: 'run.shutdown.before.start', data: { runId, lane }, at: this.options.clock.now() });
    return true;
  }

  /** A granted claim whose answer was refused (`problem` names the field): completed as failed, never run. */
  async refuseClaim(runId: string, lane: string, problem: string): Promise<void> {
    this.live.add(runId);
    this.lanes.set(runId, lane);
    await this.input(runId, { stream: this.stream(runId), type: 'run.claim.refused', data: { runId, lane, problem }, at: this.options.clock.now() });
  }

  /** Shutdown began: runs already executing go on (for their drain time); nothing new starts. */
  beginDrain(): void {
    this.draining = true;
  }

  /**
   * Finishes what a previous daemon left: a run whose process began but whose exit was never recorded
   * is not run again (its group is killed if alive, and it is completed as failed); completions
   * waiting for a retry get their timer back. Then effects flow and heartbeats start.
   */
  async start(lifeFrom?: number): Promise<void> {
    // Before this life wrote anything: its own effects are those after it (see Outbox.open).
    const from = lifeFrom ?? (await this.options.store.headSeq());
    const [executions, laneSessions] = await hydrateStates(this.options.store, [executionsProjection, laneSessionsProjection]);
    const runs = executions[this.options.computer] ?? {};
    this.laneSessions = { ...(laneSessions[this.options.computer] ?? {}) };
    // Known before the outboxes open: a completion a crash cut is sent again as they open, and its run
    // token is claimed again in the name of the life that claimed the run, read from the run's lane.
    for (const [runId, run] of Object.entries(runs)) {
      this.live.add(runId);
      this.phases.set(runId, run.phase);
      if (run.lane !== null) this.lanes.set(runId, run.lane);
    }
    for (const outbox of this.outboxes) await outbox.open(undefined, from);
    for (const [runId, run] of Object.entries(runs)) {
      if (run.phase === 'executing' || run.phase === 'requested') {
        const alive = run.pid !== null && (groupAlive(run.pid) || (run.mark !== undefined && findStrays(run.mark, run.pid).length > 0));
        await this.input(runId, {
          stream: this.stream(runId),
          type: 'run.found.interrupted',
          data: { runId, pid: run.pid, alive },
          at: this.options.clock.now(),
        });
      } else if (run.phase === 'completing' && run.completionNotBefore > 0 && !this.timers.has(runId) && this.phases.get(runId) === 'completing') {
        // Unless a decision since the outboxes opened (the resent completion's answer) armed its own, or settled it.
        this.armCompletionTimer(runId, run.completionNotBefore);
      }
    }
    for (const outbox of this.outboxes) this.subscriptions.push(outbox.follow());
    // A session the board bound to one of this computer's lanes (runledger adopt) is that lane's next.
    const head = await this.options.store.headSeq();
    this.subscriptions.push(
      this.options.store.subscribe(head).subscribe((event) => {
        if (event.type === 'adoption.adopted' && event.data.computerId === this.options.computer)
          this.laneSessions[event.data.lane] = event.data.sessionId;
      }),
    );
    await Promise.all(this.outboxes.map((o) => o.drain()));
    this.started = true;
    this.scheduleHeartbeats();
    this.scheduleIdleWorktrees();
  }

  /**
   * The queue gave a run that waited out its login's usage limit a slot again (`run.limit.resumed`):
   * it runs again. Before `start`, nothing: the start's look at the queue resumes it (see Computer).
   */
  async limitOver(runId: string): Promise<void> {
    if (!this.started) return;
    // The board is asked first: it may have reaped the run while no daemon heartbeated it (stopped
    // through the wait), and a run it gave up is never run again (docs/rules.md#computer-behaviour, "resolved server-side").
    await this.heartbeat(runId);
    // Nothing starts while the daemon drains (its slot came back as the drain began): it stays claimed,
    // and the next start, seeing its queue gave it the slot, runs it (see Computer.settleLimit).
    if (this.phases.get(runId) !== 'limited' || this.draining) return;
    await this.input(runId, { stream: this.stream(runId), type: 'run.limit.over', data: { runId }, at: this.options.clock.now() });
  }

  /** Tells the queue again of a run's usage limit it may not have heard of (a restart between the two). */
  reportLimit(runId: string, lane: string, limit: { words: string; resetAt?: number }): Promise<void> {
    return this.options.limitReached?.(runId, lane, limit) ?? Promise.resolve();
  }

  /** Where the run stands, as its actor last decided (null: not held here). */
  phaseOf(runId: string): RunExecution['phase'] | null {
    return this.phases.get(runId) ?? null;
  }

  /**
   * The runs a drain waits for: every live run but those waiting out a usage limit, which stay claimed
   * in the log for the next start (the board reaps them if no daemon heartbeats them meanwhile).
   */
  runsToDrain(): string[] {
    return [...this.live].filter((runId) => this.phases.get(runId) !== 'limited');
  }

  /**
   * The board pushed a run's frame again: a run whose completion it never acknowledged is reported
   * again now (the decider ignores this while a scheduled retry is still ahead).
   */
  async redelivered(runId: string): Promise<void> {
    if (this.phases.get(runId) !== 'completing') return;
    await this.input(runId, { stream: this.stream(runId), type: 'run.completion.due', data: { runId }, at: this.options.clock.now() });
  }

  /**
   * The board pushed a cancel of a run: one held here (claimed, not settled: the runs heartbeated) is
   * told at once, as its heartbeat answer would tell it; any other is no run of this computer's.
   */
  async cancelPushed(runId: string, frameId: string): Promise<void> {
    if (!this.live.has(runId)) return;
    await this.input(runId, { stream: this.stream(runId), type: 'run.cancel.pushed', data: { runId, frameId }, at: this.options.clock.now() });
  }

  /** Ids of the runs being heartbeated (claimed, not yet settled). */
  liveRuns(): string[] {
    return [...this.live];
  }

  stop(): void {
    this.stopped = true;
    this.idleTimer?.();
    this.stopHeartbeats?.();
    for (const cancel of this.timers.values()) cancel();
    for (const beat of this.progressBeats.values()) beat.cancel?.();
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    for (const outbox of this.outboxes) outbox.stop();
  }

  /** Kills every live process group at once (a second signal, or a test tearing down). */
  killAll(): void {
    for (const handle of this.handles.values()) handle.kill({ force: true });
  }

  private stream(runId: string): string {
    return `${this.options.computer}/run:${runId}`;
  }

  private afterCommit(runId: string, run: RunExecution, decisions: readonly DomainEvent[]): void {
    let effects = false;
    this.phases.set(runId, run.phase);
    for (const decision of decisions) {
      switch (decision.type) {
        case 'lane.session.remembered':
          this.laneSessions[decision.data.lane] = decision.data.sessionId;
          break;
        case 'lane.session.forgotten':
          if (this.laneSessions[decision.data.lane] === decision.data.sessionId) delete this.laneSessions[decision.data.lane];
          break;
        case 'run.workspace.requested':
        case 'run.branch.push.requested':
        case 'run.execution.requested':
        case 'run.kill.requested':
          effects = true;
          break;
        case 'run.completion.requested':
          effects = true;
          this.prompts.delete(runId);
          break;
        case 'run.completion.paused':
          // Unreported, yet no longer executing: the slot and lane go to the next run.
          this.tellQueue(runId, decision);
          break;
        case 'run.completion.retrying':
          this.armCompletionTimer(runId, decision.data.notBefore);
          break;
        case 'run.limit.reached': {
          const { words, resetAt } = decision.data;
          const limit = resetAt === undefined ? { words } : { words, resetAt };
          void this.reportLimit(runId, run.lane!, limit).catch((error: Error) =>
            // Told again at the next start (see Computer.resumeClaimedRuns).
            this.failures(`run.limit.reported of run ${runId} could not be recorded: ${error.message}`),
          );
          break;
        }
        case 'run.settled':
          this.live.delete(runId);
          this.lanes.delete(runId);
          this.tokens.delete(runId);
          this.phases.delete(runId);
          this.prompts.delete(runId);
          this.forgetProgress(runId);
          // Told already (a paused completion): nothing more is told of a settled run, so it is forgotten.
          if (!this.endedForQueue.delete(runId)) this.tellQueue(runId, decision);
          break;
        default:
          break;
      }
    }
    if (run.phase !== 'settled') this.live.add(runId);
    if (effects) for (const outbox of this.outboxes) void outbox.drain();
  }

  /**
   * The queue frees the run's slot and lane once, when the run no longer executes: the run's committed
   * decision is its input (docs/rules.md#actors), which carries the result the queue reads (see RunExecution.endTold).
   */
  private tellQueue(runId: string, ended: RunEnd): void {
    if (this.endedForQueue.has(runId)) return;
    this.endedForQueue.add(runId);
    void this.options.ended(ended).then(
      // A settled run is told no more: its mark goes, or every run ever handled would keep one.
      () => {
        if (!this.live.has(runId)) this.endedForQueue.delete(runId);
      },
      (error: Error) => {
        // Told again by the next settle of the run (a restart's resume, a later decision).
        this.endedForQueue.delete(runId);
        this.failures(`the end of run ${runId} (seq ${ended.seq}) could not be decided by its queue: ${error.message}`);
      },
    );
  }

  private armCompletionTimer(runId: string, notBefore: number): void {
    this.timers.get(runId)?.();
    const { clock } = this.options;
    this.timers.set(
      runId,
      wakeAt(clock, notBefore, (at) => {
        this.timers.delete(runId);
        const due: NewDomainEvent = { stream: this.stream(runId), type: 'run.completion.due', data: { runId }, at };
        void this.input(runId, due).catch(unrecorded(this.failures, due));
      }),
    );
  }

  /**
   * The run token: remembered from the claim, else claimed again (the board answers the same token), in
   * the name of the life that claimed it (another life of this computer would be `claimed_elsewhere`);
   * `gone` when the board answers that claim 410: the run is terminal there; null when it cannot be had now.
   */
  private async tokenOrGone(runId: string): Promise<RunToken> {
    const known = this.tokens.get(runId);
    if (known) return known;
    const lane = this.lanes.get(runId);
    const incarnation = lane === undefined ? undefined : await claimIncarnation(this.options.store, `${this.options.computer}/lane:${lane}`, runId);
    const answer = await this.options.board.claim(runId, incarnation);
    const token = runTokenIn(answer.body);
    if ((answer.status === 200 || answer.status === 201) && token !== null) {
      this.tokens.set(runId, token);
      return token;
    }
    return answer.status === 410 ? 'gone' : null;
  }

  /** Every live run is heartbeated now (the stream moved to another board: the lease is renewed there before it can lapse). */
  beatNow(): void {
    if (this.stopped) return;
    for (const runId of this.live) void this.heartbeat(runId);
  }

  /**
   * One loop beats for every live run, each call on its own: a slow or failing board call for one run
   * never delays the others, and no completion retry ever waits on it.
   */
  private scheduleHeartbeats(): void {
    const every = this.options.heartbeatMs ?? 30_000;
    const beat = () => {
      if (this.stopped) return;
      for (const runId of this.live) void this.heartbeat(runId);
      this.stopHeartbeats = this.options.clock.after(every, beat);
    };
    this.stopHeartbeats = this.options.clock.after(every, beat);
  }

  /** `--worktree-idle-days`: looked at once at the start, then every hour (or a quarter of the idle time, if shorter). */
  private scheduleIdleWorktrees(): void {
    const { worktreeIdleMs, repos, clock, computer, store } = this.options;
    if (worktreeIdleMs === undefined || !repos || repos.byName.size === 0) return;
    const every = Math.max(1_000, Math.min(60 * 60_000, Math.floor(worktreeIdleMs / 4)));
    const busyLanes = () => new Set(this.lanes.values());
    const round = () => {
      if (this.stopped) return;
      void closeIdleWorktrees({
        workspaceRoot: this.options.workspaceRoot,
        repos,
        idleMs: worktreeIdleMs,
        now: () => clock.now(),
        lastActivity: async (lane) => (await store.lastOfStream(`${computer}/lane:${lane}`))?.at ?? null,
        busy: (lane) => busyLanes().has(lane),
        log: this.options.say ?? this.failures,
      })
        .catch((error: unknown) => this.failures(`idle worktrees could not be looked at: ${messageOf(error)}`))
        .finally(() => {
          if (!this.stopped) this.idleTimer = clock.after(every, round);
        });
    };
    round();
  }

  /** An extra heartbeat carries a changed progress line at once, or a second after the last extra one. */
  private progressChanged(runId: string, line: string): void {
    if (this.stopped || !this.live.has(runId)) return;
    this.progress.set(runId, line);
    const { clock } = this.options;
    const beat =
      this.progressBeats.get(runId) ??
      this.progressBeats.set(runId, { lastAt: Number.NEGATIVE_INFINITY, cancel: null, inFlight: false, sent: null }).get(runId)!;
    // One is due already, or on its way (a slow board is not sent a second): the line goes as it is then.
    if (beat.cancel !== null || beat.inFlight) return;
    const send = () => {
      beat.cancel = null;
      beat.lastAt = clock.now();
      beat.inFlight = true;
      beat.sent = this.progress.get(runId) ?? null;
      void this.heartbeat(runId).finally(() => {
        beat.inFlight = false;
        const latest = this.progress.get(runId);
        // A change that came while it was on its way goes next, by the same rule.
        if (this.progressBeats.get(runId) === beat && latest !== undefined && latest !== beat.sent) this.progressChanged(runId, latest);
      });
    };
    const wait = beat.lastAt + PROGRESS_BEAT_MS - clock.now();
    if (wait <= 0) send();
    else beat.cancel = clock.after(wait, send);
  }

  private forgetProgress(runId: string): void {
    this.progressBeats.get(runId)?.cancel?.();
    this.progressBeats.delete(runId);
    this.progress.delete(runId);
  }

  private async heartbeat(runId: string): Promise<void> {
    let token: RunToken;
    try {
      token = await this.tokenOrGone(runId);
    } catch (error) {
      // The claim's life could not be read from the log: this beat is skipped, the next one asks again.
      this.failures(`the heartbeat of run ${runId} is skipped: its run token could not be had (${messageOf(error)}); the next beat tries again`);
      return;
    }
    if (token === null) return;
    // A later life asking for the token of a run the board has ended meanwhile (reaped while no daemon
    // ran) hears 410, as its heartbeat would: the run is resolved, not heartbeated without a token for ever.
    const answer = token === 'gone' ? { status: 410, body: null } : await this.options.board.heartbeat(runId, token, this.progress.get(runId));
    const cancelRequested = CancelRequested.safeParse(answer.body).success;
    if (answer.status !== 410 && !cancelRequested) return;
    const answered: NewDomainEvent = {
      stream: this.stream(runId),
      type: 'run.heartbeat.answered',
      data: { runId, status: answer.status, cancelRequested },
      at: this.options.clock.now(),
    };
    await this.input(runId, answered).catch(unrecorded(this.failures, answered));
  }
}
