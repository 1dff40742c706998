import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { agentKindOf } from '../../actors/run/resume.ts';
import { announcementOf, NO_REPOSITORIES } from '../../adapters/git/repositories.ts';
import { BoardClient } from '../../adapters/http/boardClient.ts';
import { BoardServers } from '../../adapters/http/boardServers.ts';
import { LIVENESS_MS, type PushConnect, PushStreamClient } from '../../adapters/push/pushStreamClient.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { messageOf } from '../../events/thrown.ts';
import { frameInput } from '../../events/wire/frames.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import type { ActorSystem } from '../../runtime/actors/runtime.ts';
import { stderrLog } from '../../runtime/actors/untilRecorded.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import type { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import { ComputerQueue, type QueueEffects } from './computerQueue.ts';
import { ComputerRuns, type ComputerRunsOptions } from './computerRuns.ts';
import { writeSkills } from './skills.ts';

export interface ComputerOptions {
  readonly system: ActorSystem;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly computer: string;
  /**
   * The board, `http://host:port` (or the boards of one log, comma-separated), and this computer's token.
   * A caller that must know where the calls go now (the simulator routes them) hands the BoardServers.
   */
  readonly server: string | BoardServers;
  readonly token: string;
  readonly exec: string;
  readonly workspaceRoot: string;
  /** The repositories its lanes work in (`--repo`, checked at start); none: plain folders. */
  readonly repos?: ComputerRunsOptions['repos'];
  /** `--push`: lanes' branches pushed to `origin` after each turn that changed them. */
  readonly push?: boolean;
  /** `--worktree-idle-days`, in ms: worktrees of lanes idle this long are closed. */
  readonly worktreeIdleMs?: number;
  readonly slots?: number;
  readonly loginCapacity?: Record<string, number>;
  readonly heartbeatMs?: number;
  readonly defaultTimeoutS?: number;
  readonly killGraceMs?: number;
  /** The budget sentence ahead of each prompt; on by default. */
  readonly budgetNote?: boolean;
  /** Where the token came from (`--token`, a file), for the message when the board refuses it. */
  readonly tokenSource?: string;
  readonly log?: (line: string) => void;
  /** This life of the daemon (docs/rules.md#computer-behaviour, "Incarnations"); a fresh random one by default. */
  readonly incarnation?: string;
  /** Another daemon is connected to the board as this computer: this one must stop (the CLI exits 2). */
  readonly onConnectedElsewhere?: (message: string) => void;
  /** The board refused this computer's push stream (its token, most often): this one must stop (the CLI exits 2). */
  readonly onRefused?: (message: string) => void;
  /** Its push stream connected (again): the board is reachable. */
  readonly onPushConnected?: () => void;
  /** The board's calls; by default HTTP to `server` (tests put a stand-in here). */
  readonly board?: ComputerRunsOptions['board'];
  /** Test seams (sim/): the push stream's socket, its reconnect jitter, and how agents are started. */
  readonly pushConnect?: PushConnect;
  /** The push stream's liveness check: null turns it off (the simulator's worlds). */
  readonly livenessMs?: number | null;
  readonly random?: () => number;
  readonly startAgent?: ComputerRunsOptions['startAgent'];
}

/**
 * The computer side of the daemon: frames from the board's push stream become queue inputs; the
 * queue claims; a granted claim is handed to its run actor, which executes, heartbeats and reports.
 */
export class Computer {
  readonly queue: ComputerQueue;
  readonly runs: ComputerRuns;
  readonly push: PushStreamClient;
  /** Drawn here, in the shell, once per start: the deciders only read it back from `computer.started`. */
  readonly incarnation: string;
  private readonly closeClient: () => void;
  /** The board the push stream was last connected to. */
  private lastBoard: string | null = null;

  constructor(private readonly options: ComputerOptions) {
    const { system, store, clock, computer } = options;
    this.incarnation = options.incarnation ?? randomUUID();
    // `--server URL1,URL2,…`: boards of one log; the stream moves on when one drops, the calls follow it.
    const servers = typeof options.server === 'string' ? BoardServers.parse(options.server) : options.server;
    const ownClient = options.board ? null : new BoardClient(servers, computer, options.token);
    const board = options.board ?? ownClient!;
    this.closeClient = () => ownClient?.close();
    const kind = agentKindOf(options.exec);
    const log =
      options.log ??
      (() => {
        // no log given: the daemon's narration says what matters
      });
    // An input that could not be recorded is told even when nothing else is.
    const failures = options.log ?? stderrLog;
    this.runs = new ComputerRuns({
      system,
      store,
      clock,
      computer,
      exec: options.exec,
      workspaceRoot: options.workspaceRoot,
      ...(options.repos ? { repos: options.repos } : {}),
      ...(options.push ? { push: true } : {}),
      ...(options.worktreeIdleMs !== undefined ? { worktreeIdleMs: options.worktreeIdleMs } : {}),
      ...(options.log ? { say: options.log } : {}),
      ...(options.defaultTimeoutS !== undefined ? { defaultTimeoutS: options.defaultTimeoutS } : {}),
      ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
      ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
      ...(options.budgetNote !== undefined ? { budgetNote: options.budgetNote } : {}),
      ...(options.startAgent ? { startAgent: options.startAgent } : {}),
      board: {
        claim: (runId, incarnation) => board.claim(runId, incarnation),
        heartbeat: (runId, token, progress) => board.heartbeat(runId, token, progress),
        reply: (runId, token, text) => board.reply(runId, token, text),
        complete: (runId, token, result, usage, changes) => board.complete(runId, token, result, usage, changes),
      },
      log: failures,
      ended: (ended) => this.queue.message(ended),
      limitReached: async (runId, lane, limit) => {
        await this.queue.input({ stream: `${computer}/lane:${lane}`, type: 'run.limit.reported', data: { runId, ...limit }, at: clock.now() });
      },
    });
    this.queue = new ComputerQueue(
      system,
      store,
      clock,
      computer,
      board,
      {
        acknowledge: (frameId, status, reason) => this.push.acknowledge(frameId, status, reason),
        log: failures,
        claimed: (claimed, answer) => {
          const { runId } = claimed.data;
          void this.startClaimed(claimed, answer)?.catch((error) => log(`run ${runId} could not be handed over: ${messageOf(error)}`));
        },
        startOf: (lane, timeoutS, asked) => this.runs.startOf(lane, timeoutS, asked),
        limitOver: (runId) => {
          void this.runs.limitOver(runId).catch((error) => log(`run ${runId} could not run again after its usage limit: ${messageOf(error)}`));
        },
      },
      (claim) => {
        this.runs.rememberToken(claim.runId, claim.runToken);
        if (claim.lane && claim.skills.length) writeSkills(join(options.workspaceRoot, claim.lane), kind, claim.skills);
      },
    );
    this.push = new PushStreamClient({
      server: servers,
      computer,
      token: options.token,
      incarnation: this.incarnation,
      // Which repositories it has, for the board to offer it only runs it can do (none: it says it has none).
      repos: announcementOf(options.repos ?? NO_REPOSITORIES),
      clock,
      ...(options.pushConnect ? { connect: options.pushConnect } : {}),
      ...(options.random ? { random: options.random } : {}),
      onConnectedElsewhere: (reason) => {
        const message =
          `another daemon is connected to ${servers} as computer ${computer} (${reason}): stop it, or give this one its own id ` +
          '(runledger computer add ID on the board, then --computer ID --token T)';
        log(message);
        options.onConnectedElsewhere?.(message);
      },
      // Retrying would be refused the same way (docs/rules.md#wire-and-cli stops a computer refused 4409 likewise): say why, and stop.
      onRefused: (status) => {
        const message = refusedStreamMessage(servers.toString(), computer, status, options.tokenSource ?? 'the token given');
        log(message);
        options.onRefused?.(message);
      },
      onFrame: async (raw) => {
        const input = frameInput(computer, raw, clock.now());
        await this.queue.input(input);
        if (input.type !== 'frame.received') return;
        if (input.data.kind === 'run.requested') await this.runs.redelivered(input.data.runId);
        if (input.data.kind === 'run.cancel_requested') await this.runs.cancelPushed(input.data.runId, input.data.frameId);
      },
      log: failures,
      // Within a heartbeat's time (3 s at least, 15 s at most): failed over well within the run lease, which is three heartbeats by default.
      livenessMs: options.livenessMs === undefined ? Math.max(3_000, Math.min(LIVENESS_MS, options.heartbeatMs ?? LIVENESS_MS)) : options.livenessMs,
      onState: (state, detail) => {
        log(`computer ${computer}: push stream ${state}${detail ? ` (${detail})` : ''}`);
        if (state !== 'connected') return;
        options.onPushConnected?.();
        // Moved to another board: its runs' leases are renewed there at once (the board left heard none of late).
        const board = servers.current();
        if (this.lastBoard !== null && this.lastBoard !== board) this.runs.beatNow();
        this.lastBoard = board;
      },
    });
  }

  async start(): Promise<void> {
    const { clock, computer } = this.options;
    // Where this life begins in the log: its effects are taken by the decisions that call for them, and
    // those of the last life before this seq that no input settled are settled as the outboxes open.
    const lifeFrom = await this.options.store.headSeq();
    // Recorded first: it ends what the last life left (its drain), before anything else is decided.
    await this.queue.start(
      {
        stream: `${computer}/computer:${computer}`,
        type: 'computer.started',
        data: { incarnation: this.incarnation, host: hostname().slice(0, 255) || 'unknown', pid: process.pid },
        at: clock.now(),
      },
      lifeFrom,
    );
    const queue = await this.queue.read(({ slots, loginCapacity }) => ({ slots, loginCapacity }));
    const slots = this.options.slots ?? 1;
    const loginCapacity = this.options.loginCapacity ?? {};
    if (queue.slots !== slots || JSON.stringify(queue.loginCapacity) !== JSON.stringify(loginCapacity)) {
      await this.queue.input({
        stream: `${computer}/computer:${computer}`,
        type: 'computer.configured',
        data: { slots, loginCapacity },
        at: clock.now(),
      });
    }
    await this.runs.start(lifeFrom);
    await this.resumeClaimedRuns();
    this.push.start();
  }

  /**
   * Runs the queue holds as running whose hand-over never happened (the daemon died between the
   * claim and the hand-over) start now; those whose execution already ended free their slot.
   */
  private async resumeClaimedRuns(): Promise<void> {
    // A copy of the runs it holds only, not of its ledger of every run handled here (a start would grow with the log).
    const runs = await this.queue.read((queue) => structuredClone(Object.values(queue.runs)));
    const live = new Set(this.runs.liveRuns());
    for (const run of runs) {
      if (run.status === 'running' && this.runs.phaseOf(run.runId) === 'limited') {
        await this.settleLimit(run.runId, run.lane);
        continue;
      }
      const { computer, store } = this.options;
      const laneStream = `${computer}/lane:${run.lane}`;
      // Held (a usage limit) or running, not live, yet its run wrote something: it was handed over, and
      // has settled (cancelled, resolved) in a life that stopped before its queue heard: told now, or its
      // lane (and, at the reset, a slot) would be held for ever.
      if (!(run.claimHeld || run.status === 'running') || live.has(run.runId)) continue;
      if ((await store.lastOfStream(`${computer}/run:${run.runId}`)) !== null) {
        await this.endedBeforeRestart(run.runId, laneStream);
        continue;
      }
      // Claimed, never started (the last life stopped between its queue's commit and its run's decision,
      // held or not): started now, its run deciding from the claim as it would have then.
      const lane = await store.readStream(laneStream);
      const answer = lane.findLast((e) => e.type === 'claim.answered' && e.data.runId === run.runId);
      const claimed = lane.findLast((e) => e.type === 'run.claimed' && e.data.runId === run.runId);
      if (answer?.type === 'claim.answered' && claimed?.type === 'run.claimed') await this.startClaimed(claimed, answer.data);
    }
  }

  /**
   * A run that settled in a life that stopped before its queue decided its end: its queue takes its
   * committed settle now, as it would have then. A stream holding none (a log this version cannot read
   * an end from) is told by an input of its own, as older versions did.
   */
  private async endedBeforeRestart(runId: string, laneStream: string): Promise<void> {
    const { computer, store, clock } = this.options;
    const end = (await store.readStream(`${computer}/run:${runId}`)).findLast((e) => e.type === 'run.settled');
    if (end?.type === 'run.settled') {
      await this.queue.message(end);
      return;
    }
    const data = { runId, ok: false, reason: 'ended before a restart' };
    await this.queue.input({ stream: laneStream, type: 'run.execution.ended', data, at: clock.now() });
  }

  /**
   * A granted claim's run starts from the queue's `run.claimed` (one that carries its start: else an
   * older version's, handed over as it did), or, its answer refused, is completed as failed.
   */
  private startClaimed(
    claimed: Extract<DomainEvent, { type: 'run.claimed' }>,
    answer: Parameters<NonNullable<QueueEffects['claimed']>>[1],
  ): Promise<void> | null {
    const { runId, lane } = claimed.data;
    if (answer.invalid !== undefined) return this.runs.refuseClaim(runId, lane, answer.invalid);
    if (!answer.run) return null;
    return claimed.data.start ? this.runs.claimed(claimed, answer.run.prompt) : this.runs.handOver(runId, lane, answer.run);
  }

  /**
   * A run waiting out a usage limit that its queue holds as running: the last life stopped between
   * the two. Either the queue gave it its slot back (a `run.limit.resumed` after its limit) and the run
   * never heard, or the queue never heard of the limit: each is told what it missed.
   */
  private async settleLimit(runId: string, lane: string): Promise<void> {
    const { computer, store } = this.options;
    const reached = (await store.readStream(`${computer}/run:${runId}`)).findLast((e) => e.type === 'run.limit.reached');
    if (reached?.type !== 'run.limit.reached') return;
    const resumed = (await store.readStream(`${computer}/lane:${lane}`)).findLast((e) => e.type === 'run.limit.resumed' && e.data.runId === runId);
    if (resumed && resumed.seq > reached.seq) {
      await this.runs.limitOver(runId);
      return;
    }
    const { words, resetAt } = reached.data;
    await this.runs.reportLimit(runId, lane, resetAt === undefined ? { words } : { words, resetAt });
  }

  /** Why its log cannot be written now (see EventStore.unwritable), or null. */
  logUnwritable(): LogUnwritableError | null {
    return this.options.store.unwritable();
  }

  stop(): void {
    void this.push.stop();
    this.runs.stop();
    this.queue.stop();
    this.closeClient();
  }
}

/** What a computer whose push stream the board refused is told: which board, which computer, and what to do. */
function refusedStreamMessage(server: string, computer: string, status: number, tokenSource: string): string {
  if (status === 401) {
    return (
      `the board at ${server} refused the token of computer ${computer} (401; this daemon sent ${tokenSource}): ` +
      `on the board, \`runledger computer add ${computer}\` prints a token for it; pass that one with --token (stopping: a retry would be refused the same way)`
    );
  }
  return `the board at ${server} refused the push stream of computer ${computer} (${status}): check --server and --computer (stopping: a retry would be refused the same way)`;
}
