import type { BoardAnswer } from '../adapters/http/boardClient.ts';
import { BoardHost } from '../apps/board/boardHost.ts';
import type { UnstartedBoard } from '../apps/board/boardServer.ts';
import type { RunningChores } from '../apps/board/chores/boardChores.ts';
import type { LivenessReader } from '../apps/board/chores/notices/noticeRound.ts';
import type { BoardPeers } from '../apps/board/peers/boardPeers.ts';
import { type BoardCore, buildBoard } from '../apps/daemon/assembleBoard.ts';
import { assembleProcess, startFolds } from '../apps/daemon/assembleProcess.ts';
import { type ActorSystem, stopSystem } from '../runtime/actors/runtime.ts';
import type { ProjectionKeeper } from '../runtime/folds/keeper/projectionKeeper.ts';
import type { EventStore, OpenedLog } from '../runtime/store/eventStore.ts';
import { LogUnwritableError } from '../runtime/store/logUnwritable.ts';
import type { SimDisk } from './disk.ts';
import { type HookInvocation, SIM_HOOK_TIMEOUT_MS, SIM_HOOKS, simHookRunner } from './hooks.ts';
import type { Prng } from './prng.ts';
import type { SimSocket } from './pushLink.ts';
import { LifeClock, Owner, type Scheduler, type TimerFuzz } from './scheduler.ts';
import { startLife } from './startLife.ts';

export const BOARD_SECRET = 'sim-board-secret';
export const SUBMIT_TOKEN = 'sim-submit-token';

export interface BoardLife {
  readonly owner: Owner;
  readonly clock: LifeClock;
  readonly store: EventStore;
  readonly system: ActorSystem;
  readonly host: BoardHost;
  readonly keeper: ProjectionKeeper;
  readonly chores: RunningChores;
  readonly number: number;
  readonly startedAt: number;
}

/**
 * Where a board's log is: a disk of its own (one board), or the log it shares with the other boards
 * (sim/sharedLog.ts: PostgreSQL, docs/rules.md#postgresql-board), on which each life writes as a writer of its own.
 */
export interface BoardLog {
  readonly name: string;
  full: boolean;
  readonly current: SimDisk['current'];
  snapshot: SimDisk['snapshot'];
  open(report: (line: string) => void, owner: Owner, board: string, writer: string): Promise<OpenedLog>;
  /** `board` hears the other boards' commits `ms` late (0: on time); a log that cannot delay them has none. */
  lag?(board: string, ms: number): void;
  /** After each step, before the invariants read `current` (a copy of a log kept elsewhere: sim/pgLog.ts). */
  catchUp?(): Promise<void>;
  /** At the world's end: its connections closed. */
  close?(): Promise<void>;
}

/** The other boards of a life's log (docs/rules.md#postgresql-board), met as `identity`; none for a board alone on its disk. */
export type PeersOf = (life: {
  readonly owner: Owner;
  readonly clock: LifeClock;
  readonly identity: string;
  readonly log: (line: string) => void;
}) => BoardPeers;

/** The board's machine: its log outlives its lives; a life is a BoardHost (actors, push hub, leases) on it. */
export class BoardMachine {
  life: BoardLife | null = null;
  lives = 0;
  /** A life is starting (its start may wait out a full disk): no second one starts beside it. */
  booting = false;
  /** The board ends of the push streams of its current life. */
  sockets: SimSocket[] = [];
  /** Hook commands of the current life still running: a crash cuts them. */
  private readonly runningHooks = new Set<HookInvocation>();

  constructor(
    /** `board`, or `board1`, `board2`, … when several share one log. */
    readonly name: string,
    readonly disk: BoardLog,
    /** The number of each life started: unique across the boards of a world (a hook names the life that ran it). */
    private readonly nextLife: () => number,
    private readonly scheduler: Scheduler,
    private readonly skew: () => number,
    private readonly fuzz: () => TimerFuzz,
    private readonly leaseMs: number,
    private readonly log: (line: string) => void,
    /** The hook processes' draws, and who hears of each one started (the invariants). */
    private readonly hooks: { readonly prng: Prng; readonly invoked: (invocation: HookInvocation) => void },
    /** Its peers on a shared log (sim/boards.ts), or null: it is alone (SoleBoard). */
    private readonly peersOf: PeersOf | null = null,
  ) {}

  start(): Promise<BoardLife | null> {
    return startLife(this, () => this.boot());
  }

  /** Its URL in a computer's `--server` list. */
  get url(): string {
    return `http://${this.name}.sim:7420`;
  }

  /**
   * What it writes as (the log's `actor` column): a restarted board is the same host and pid as far as
   * the log can tell, so its outboxes know the takes of its earlier lives for their own
   * (runtime/actors/outbox.ts), as a board restarted on its machine probes them gone.
   */
  get writer(): string {
    return `${this.name}-host:1`;
  }

  private async boot(): Promise<BoardLife> {
    this.lives++;
    const number = this.nextLife();
    const owner = new Owner(`${this.name}#${number}`);
    const clock = new LifeClock(this.scheduler, owner, this.skew, this.fuzz);
    const log = (line: string) => owner.alive && this.log(`${this.name}#${number}: ${line}`);
    const store = await this.disk.open(log, owner, this.name, this.writer);
    // The daemon's assembly (apps/daemon/) on the simulated edges: the log outlives the life, the actors' timers run on its clock.
    const parts = assembleProcess({ clock, store, log, closeStore: async () => undefined });
    // Unique to this life, as `host#incarnation:pid` is to a server process (its writer is not: see `writer`).
    const peers = this.peersOf?.({ owner, clock, identity: `${this.writer}#${number}`, log }) ?? null;
    // Not on HTTP: the simulated network calls its host (`call`) and attaches its push streams.
    const serve = (core: BoardCore): UnstartedBoard => {
      const board = new BoardHost(core);
      const start = async () => {
        await board.start();
        return { url: this.url, board, close: () => board.stop() };
      };
      return { board, start };
    };
    // A session's liveness, as a driver would read it: running, at times stopped (its notices are withheld
    // until it runs again), at times not readable (they wait).
    const liveness: LivenessReader = {
      read: async () => {
        const roll = this.hooks.prng.next();
        if (roll < 0.2) throw new Error('the sim driver could not read it');
        return roll < 0.3 ? 'stopped' : 'running';
      },
    };
    // The round (tick) every 10 s on the life's clock, hooks run by the simulated hook processes.
    const runHook = simHookRunner({ life: number, clock, prng: this.hooks.prng, invoked: this.hooks.invoked, running: this.runningHooks });
    const built = buildBoard(
      parts,
      {
        boardSecret: BOARD_SECRET,
        submitToken: SUBMIT_TOKEN,
        leaseMs: this.leaseMs,
        hooks: SIM_HOOKS,
        hookTimeoutMs: SIM_HOOK_TIMEOUT_MS,
        tickMs: 10_000,
      },
      { serve, peers, liveness, runHook },
    );
    await startFolds(parts);
    await built.start();
    const { system, keeper, chores } = parts;
    this.life = { owner, clock, store, system, host: built.board, keeper, chores: chores!, number, startedAt: this.scheduler.now };
    return this.life;
  }

  /** The process dies: nothing of this life runs again; its log keeps what was committed. */
  crash(): void {
    // A board still starting has no life to kill yet: its start goes on (the sim strikes boards that run).
    const life = this.life;
    if (!life) return;
    this.booting = false;
    this.life = null;
    for (const socket of this.sockets) socket.processDied();
    this.sockets = [];
    life.owner.kill();
    // Their processes may go on, detached, but no life will ever see them end.
    for (const hook of this.runningHooks) hook.cut = true;
    this.runningHooks.clear();
    stopSystem(life.system);
  }

  /** A board call as the HTTP API answers it, or null when no board runs (the connection is refused). */
  async call(request: BoardRequest): Promise<BoardAnswer | null> {
    const life = this.life;
    if (!life) return null;
    const { host } = life;
    try {
      switch (request.kind) {
        case 'claim':
          if (!(await host.isComputerToken(request.computer, request.token))) return UNAUTHORIZED;
          return await host.claim(request.computer, request.runId, request.incarnation);
        case 'heartbeat':
        case 'reply':
        case 'complete': {
          const holder = await host.runTokenHolder(request.runId, request.token);
          if (holder === null) return UNAUTHORIZED;
          if (request.kind === 'heartbeat') return await host.heartbeat(request.runId, holder);
          if (request.kind === 'reply') return await host.reply(request.runId, holder, request.text);
          return await host.complete(request.runId, holder, request.ok, request.error);
        }
      }
    } catch (error) {
      // As the HTTP API answers a request that failed (adapters/http/httpApi.ts, refusalOf).
      if (error instanceof LogUnwritableError) return { status: 507, body: { detail: { error: 'log_unwritable' } } };
      return { status: 500, body: { detail: { error: 'internal' } } };
    }
  }
}

const UNAUTHORIZED: BoardAnswer = { status: 401, body: { detail: { error: 'unauthorized' } } };

export type BoardRequest =
  | { kind: 'claim'; computer: string; token: string; runId: string; incarnation?: string }
  | { kind: 'heartbeat'; runId: string; token: string }
  | { kind: 'reply'; runId: string; token: string; text: string }
  | { kind: 'complete'; runId: string; token: string; ok: boolean; error?: string };
