import { BoardServers } from '../adapters/http/boardServers.ts';
import { type BoardLife, type BoardLog, BoardMachine, type PeersOf } from './boardMachine.ts';
import { SimDisk } from './disk.ts';
import type { HookInvocation } from './hooks.ts';
import { PgSharedLog } from './pgLog.ts';
import type { Prng } from './prng.ts';
import type { Scheduler, TimerFuzz } from './scheduler.ts';
import { SharedLog } from './sharedLog.ts';

export interface BoardsOptions {
  /** One board on a disk of its own (SQLite), or two on one shared log (PostgreSQL, docs/rules.md#postgresql-board). */
  readonly count: 1 | 2;
  readonly scheduler: Scheduler;
  readonly fuzz: () => TimerFuzz;
  readonly leaseMs: number;
  readonly say: (line: string) => void;
  /** The hook processes' draws, and who hears of each one started (the invariants). */
  readonly hooks: { readonly prng: Prng; readonly invoked: (invocation: HookInvocation) => void };
  /** The shared log's draws (when its commits reach the other boards): drawn only in a world of two boards. */
  readonly prng: () => Prng;
  /** Of two boards: their log on this real PostgreSQL database (an empty log's URL) instead of the simulated one (sim/pgLog.ts). */
  readonly postgres?: string;
}

/**
 * The world's boards, wired in one place: one on its own disk (alone: SoleBoard), or two sharing one
 * log, each running the full board (HTTP API, push hub, lease monitor, projections) with the peers of
 * that log (docs/rules.md#postgresql-board, as `runledger server` on PostgreSQL): one holds the chores' lease and alone does
 * the chores (reaping, offers again, hooks, notices, orphaned computers), on the heartbeats any board heard.
 */
export class SimBoards {
  readonly machines: readonly BoardMachine[];
  /** The log every board writes: the one the invariants read. */
  readonly log: BoardLog;
  private lifeCount = 0;

  constructor(o: BoardsOptions) {
    const nextLife = () => ++this.lifeCount;
    const machine = (name: string, log: BoardLog, peersOf: PeersOf | null = null) =>
      new BoardMachine(name, log, nextLife, o.scheduler, () => 0, o.fuzz, o.leaseMs, o.say, o.hooks, peersOf);
    if (o.count === 1) {
      this.log = new SimDisk('board');
      this.machines = [machine('board', this.log)];
    } else {
      const shared = o.postgres === undefined ? new SharedLog('board', o.scheduler, o.prng()) : new PgSharedLog(o.postgres, o.scheduler);
      const peersOf: PeersOf = ({ owner, clock, identity, log }) => shared.peers(owner, identity, { clock, log });
      this.log = shared;
      this.machines = [machine('board1', shared, peersOf), machine('board2', shared, peersOf)];
    }
  }

  get several(): boolean {
    return this.machines.length > 1;
  }

  /** The board at `url` (a computer's current server, or its push stream's `ws://` URL). */
  at(url: string): BoardMachine {
    const host = new URL(url).host;
    const board = this.machines.find((m) => new URL(m.url).host === host);
    if (!board) throw new Error(`no board at ${url} in this world`);
    return board;
  }

  named(name: string): BoardMachine {
    const board = this.machines.find((m) => m.name === name);
    if (!board) throw new Error(`no board named ${name} in this world`);
    return board;
  }

  /** A computer's `--server` list, the board it tries first at its head. */
  servers(first = 0): BoardServers {
    const urls = this.machines.map((m) => m.url);
    return new BoardServers([...urls.slice(first), ...urls.slice(0, first)]);
  }

  /** Some board that runs, or null when all are down. */
  anyLife(): BoardLife | null {
    return this.machines.find((m) => m.life)?.life ?? null;
  }

  /** The board life numbered `number`, if it still runs. */
  lifeNumbered(number: number): BoardLife | null {
    return this.machines.find((m) => m.life?.number === number)?.life ?? null;
  }

  /** The board that writes as `writer` (the log's `actor` column). */
  writing(writer: string): BoardMachine | null {
    return this.machines.find((m) => m.writer === writer) ?? null;
  }
}
