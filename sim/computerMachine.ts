import type { BoardAnswer } from '../adapters/http/boardClient.ts';
import type { BoardServers } from '../adapters/http/boardServers.ts';
import type { PushConnect } from '../adapters/push/pushStreamClient.ts';
import type { SessionCloser } from '../apps/computer/closer/sessionCloser.ts';
import type { Computer } from '../apps/computer/computer.ts';
import { drainComputer } from '../apps/computer/drainComputer.ts';
import { buildComputer } from '../apps/daemon/assembleComputer.ts';
import { assembleProcess, closeProcess, type ProcessParts, startFolds } from '../apps/daemon/assembleProcess.ts';
import { type ActorSystem, stopSystem } from '../runtime/actors/runtime.ts';
import type { ProjectionKeeper } from '../runtime/folds/keeper/projectionKeeper.ts';
import type { EventStore } from '../runtime/store/eventStore.ts';
import { type AgentsWorld, type SimLogin, simAgentStarter } from './agents.ts';
import type { BoardRequest } from './boardMachine.ts';
import type { SimBoards } from './boards.ts';
import { SimDisk } from './disk.ts';
import type { SimNetwork } from './network.ts';
import type { Prng } from './prng.ts';
import { SimSocket } from './pushLink.ts';
import { LifeClock, Owner, type Scheduler, type TimerFuzz } from './scheduler.ts';
import { type SessionsWorld, SimSessions } from './sessions.ts';
import { startLife } from './startLife.ts';

/** How long the computer's HTTP client waits for an answer before calling it a network error (adapters/http/boardClient.ts). */
const CALL_TIMEOUT_MS = 15_000;

export interface ComputerLife {
  readonly owner: Owner;
  readonly name: string;
  readonly clock: LifeClock;
  readonly store: EventStore;
  readonly system: ActorSystem;
  readonly computer: Computer;
  /** Its session closer, as the daemon runs one beside its computer. */
  readonly sessionCloser: SessionCloser;
  readonly keeper: ProjectionKeeper;
  /** Its process's parts, as the daemon's assembly made them: stopped in the daemon's order. */
  readonly parts: ProcessParts;
  readonly incarnation: string;
  readonly startedAt: number;
  draining: boolean;
  /** Its start finished: its timers are armed from the log. */
  ready: boolean;
  /** When each run was first seen live (claimed, not settled) in this life. */
  readonly liveSince: Map<string, number>;
}

export interface ComputerWorld extends AgentsWorld, SessionsWorld {
  readonly seed: number;
  readonly scheduler: Scheduler;
  readonly network: SimNetwork;
  readonly boards: SimBoards;
  readonly prng: Prng;
  readonly fuzz: () => TimerFuzz;
  log(line: string): void;
  /** A test seam of the simulator: wraps the board calls a computer makes (a planted bug). */
  readonly wrapBoard?: (computer: string, board: SimBoardCalls) => SimBoardCalls;
}

export type SimBoardCalls = {
  claim(runId: string, incarnation?: string): Promise<BoardAnswer>;
  heartbeat(runId: string, token: string): Promise<BoardAnswer>;
  reply(runId: string, token: string, text: string): Promise<BoardAnswer>;
  complete(runId: string, token: string, result: { ok: boolean; error?: string }): Promise<BoardAnswer>;
};

/**
 * One computer: its disk and its sessions outlive its lives (`twin` makes a second machine under the
 * same id and token, with a disk of its own). A life is the real Computer on the simulated edges.
 */
export class ComputerMachine {
  readonly disk: SimDisk;
  life: ComputerLife | null = null;
  lives = 0;
  /** A life is starting (its start may wait out a full disk): no second one starts beside it. */
  booting = false;
  /** Sessions the agent keeps on this machine (Claude's session files). */
  readonly sessions = new Set<string>();
  /** Its sessions' agents, as the closer's driver reads and stops them: they outlive a life too. */
  readonly agents: SimSessions;
  /** The login its agents share: its usage limit outlives a life too. */
  readonly login: SimLogin = { limitedUntil: 0, limitedRuns: new Set() };
  skewMs = 0;
  /** Pushed client sockets of the current life, so a cut reaches them. */
  private sockets: SimSocket[] = [];

  constructor(
    readonly id: string,
    readonly machine: string,
    readonly token: string,
    private readonly world: ComputerWorld,
    private readonly slots: number,
    /** Of several boards, the one its `--server` list names first. */
    private readonly firstBoard = 0,
  ) {
    this.disk = new SimDisk(machine);
    this.agents = new SimSessions({ machine, lifeName: () => this.life?.name ?? null }, world, world.seed);
  }

  start(): Promise<ComputerLife | null> {
    return startLife(this, () => this.boot());
  }

  private async boot(): Promise<ComputerLife> {
    const { world } = this;
    const number = ++this.lives;
    const name = `${this.machine}#${number}`;
    const owner = new Owner(name);
    const clock = new LifeClock(world.scheduler, owner, () => this.skewMs, world.fuzz);
    const log = (line: string) => owner.alive && world.log(`${name}: ${line}`);
    const store = await this.disk.open(log);
    // Drawn in the order a life always drew them: the seeds' histories stay what they were.
    const incarnation = world.prng.uuid();
    const random = world.prng.fork();
    const agentDraws = world.prng.fork();
    // The daemon's assembly (apps/daemon/) on the simulated edges: the disk outlives the life, the actors' timers run on its clock.
    const parts = assembleProcess({ clock, store, log, closeStore: async () => undefined });
    await startFolds(parts);
    // Its `--server` list: the push stream moves on when its board drops it, and the calls follow (adapters/http/boardServers.ts).
    const servers = world.boards.servers(this.firstBoard);
    const calls = this.boardCalls(owner, servers);
    const built = buildComputer(
      parts,
      {
        computer: this.id,
        server: servers,
        token: this.token,
        exec: 'claude',
        workspaceRoot: `/tmp/runledger-sim/${this.machine}`,
        slots: this.slots,
        // Its liveness left to the daemon's default for this heartbeat (15 s): it pings its board and leaves one silent that long.
        heartbeatMs: 30_000,
        killGraceMs: 2_000,
        onConnectedElsewhere: () => this.twinRefused(),
        // As the daemon's defaults: a round every 10 s over the closes its runs' ends intend.
        sessions: { tickMs: 10_000, quietMs: 120_000 },
      },
      {
        board: world.wrapBoard ? world.wrapBoard(this.id, calls) : calls,
        pushConnect: this.connector(owner),
        startAgent: simAgentStarter({ computer: this.id, life: name, clock, prng: agentDraws, sessions: this.sessions, login: this.login, world }),
        sessionDriver: this.agents.driver({ name, clock }),
        incarnation,
        random: () => random.next(),
      },
    );
    const life: ComputerLife = {
      owner,
      name,
      clock,
      store,
      system: parts.system,
      computer: built.computer,
      sessionCloser: built.sessions,
      keeper: parts.keeper,
      parts,
      incarnation,
      startedAt: world.scheduler.now,
      draining: false,
      ready: false,
      liveSince: new Map(),
    };
    this.life = life;
    await built.start();
    life.ready = true;
    return life;
  }

  /** The process dies at once: its timers, sockets and calls with it; its log keeps what was committed. */
  crash(): void {
    this.booting = false;
    const life = this.life;
    if (!life) return;
    this.life = null;
    for (const socket of this.sockets) socket.processDied();
    this.sockets = [];
    life.owner.kill();
    stopSystem(life.system);
  }

  /** SIGTERM: the real drain, on the life's clock; resolves when the process would exit. */
  async drain(drainMs: number): Promise<void> {
    const life = this.life;
    if (!life || life.draining) return;
    life.draining = true;
    await drainComputer(
      life.computer,
      life.clock,
      drainMs,
      (line) => life.owner.alive && this.world.log(`${life.name}: ${line}`),
      'sim stop',
      (ms) => new Promise((r) => life.clock.after(ms, r)),
    );
    if (this.life !== life) return;
    // The daemon's stop, in its order (apps/daemon/assembleProcess.ts); then the process exits.
    await closeProcess(life.parts);
    if (this.life === life) this.crash();
  }

  /** The board refused this life's stream (4409): the daemon drains and exits 2, as the CLI does. */
  private twinRefused(): void {
    void this.drain(5_000);
  }

  /** Cuts the push stream (both ends see 1006); the client reconnects with its backoff. */
  cutStream(): void {
    for (const socket of this.sockets) socket.cut();
  }

  private boardCalls(owner: Owner, servers: BoardServers): SimBoardCalls {
    const call = (request: BoardRequest) => this.call(owner, servers.current(), request);
    return {
      claim: (runId, incarnation) => call({ kind: 'claim', computer: this.id, token: this.token, runId, ...(incarnation ? { incarnation } : {}) }),
      heartbeat: (runId, token) => call({ kind: 'heartbeat', runId, token }),
      reply: (runId, token, text) => call({ kind: 'reply', runId, token, text }),
      complete: (runId, token, result) =>
        call({ kind: 'complete', runId, token, ok: result.ok, ...(result.error !== undefined ? { error: result.error } : {}) }),
    };
  }

  /**
   * One HTTP call over the simulated network: the request may be lost (a network error once the
   * client's timeout passes), the board may be down or unreachable (refused at once), the answer may be
   * lost after the board acted on the request.
   */
  private call(owner: Owner, url: string, request: BoardRequest): Promise<BoardAnswer> {
    const { network, scheduler } = this.world;
    const board = this.world.boards.at(url);
    if (!owner.alive) return new Promise<never>(() => undefined);
    return new Promise<BoardAnswer>((resolve) => {
      let answered = false;
      const answer = (value: BoardAnswer) => {
        if (answered || !owner.alive) return;
        answered = true;
        resolve(value);
      };
      scheduler.at(scheduler.now + CALL_TIMEOUT_MS, owner, `timeout ${request.kind}`, () => answer({ status: 0 }));
      if (network.isUnreachable(this.id, board.name)) {
        network.send(this.id, [owner], `refused ${request.kind}`, () => answer({ status: 0 }), 0, true);
        return;
      }
      network.send(
        this.id,
        [owner],
        `${request.kind} ${request.runId}`,
        () => {
          const boardLife = board.life;
          if (!boardLife) {
            network.send(this.id, [owner], `refused ${request.kind}`, () => answer({ status: 0 }), 0, true);
            return;
          }
          void board.call(request).then((value) => {
            if (value === null || !boardLife.owner.alive) return;
            network.send(this.id, [owner, boardLife.owner], `answer ${request.kind} ${value.status}`, () => answer(value), 0, false, true);
          });
        },
        0,
        false,
        true,
      );
    });
  }

  /** The push stream's connect: a SimSocket pair across the network, attached to the board's push hub. */
  private connector(owner: Owner): PushConnect {
    return (url, options) => {
      const { network } = this.world;
      const board = this.world.boards.at(url);
      const client = new SimSocket(network, this.id, [owner], 'computer');
      if (!owner.alive) return client.asWebSocket();
      this.sockets = this.sockets.filter((s) => s.readyState !== 3);
      this.sockets.push(client);
      const refused = () => network.send(this.id, [owner], 'connect refused', () => client.closeHere(1006, ''), 0, true);
      if (network.isUnreachable(this.id, board.name)) {
        refused();
        return client.asWebSocket();
      }
      network.send(
        this.id,
        [owner],
        'connect',
        () => {
          const boardLife = board.life;
          if (!boardLife || network.isUnreachable(this.id, board.name)) return refused();
          const server = new SimSocket(network, this.id, [boardLife.owner, owner], 'board');
          server.readyState = 1;
          board.sockets.push(server);
          server.peer = client;
          client.peer = server;
          client.owners.push(boardLife.owner);
          const incarnation = options.headers['Runledger-Incarnation'] ?? options.headers['runledger-incarnation'] ?? null;
          void boardLife.host.isComputerToken(this.id, this.token).then((ok) => {
            if (!ok || !boardLife.owner.alive || client.readyState !== 0) return refused();
            // The upgrade's answer and the first frames travel the same way: the client is open before any frame reaches it.
            client.open();
            boardLife.host.push.attach(this.id, incarnation, server.asWebSocket());
          });
        },
        0,
        true,
      );
      return client.asWebSocket();
    };
  }
}
