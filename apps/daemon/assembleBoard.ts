import type { BoardHostOptions } from '../board/boardHost.ts';
import type { UnstartedBoard } from '../board/boardServer.ts';
import { startBoardChores } from '../board/chores/boardChores.ts';
import type { HookCommands } from '../board/chores/hooks/hookNames.ts';
import type { RunHook } from '../board/chores/hooks/hookRunner.ts';
import type { LivenessReader } from '../board/chores/notices/noticeRound.ts';
import type { BoardPeers } from '../board/peers/boardPeers.ts';
import { choresOn } from '../board/peers/leasedStore.ts';
import { type ProcessParts, startOrAbort } from './assembleProcess.ts';

/** What the board's host is made of, handed to `serve`. */
export type BoardCore = Pick<BoardHostOptions, 'system' | 'store' | 'clock' | 'boardSecret' | 'submitToken' | 'leaseMs' | 'peers' | 'log'>;

/** A board's own edges: how it meets its computers and clients, its peers, how it reads sessions and runs hooks. */
export interface BoardPorts {
  /**
   * Makes the board's host on `core`, to be started where its computers and clients reach it: on HTTP
   * and WebSocket (makeBoardServer) for the daemon; called directly over the simulated network in sim/.
   */
  readonly serve: (core: BoardCore) => UnstartedBoard;
  /** The other boards of its log (PostgreSQL), or null: it is alone. */
  readonly peers: BoardPeers | null;
  /** How a session's liveness is read, for its notices (the daemon's session driver). */
  readonly liveness: LivenessReader;
  /** How hook commands are run: processes by default. */
  readonly runHook?: RunHook;
}

/** What a board is told: its secrets, its leases, its hooks and how often its chores run. */
export interface BoardSettings {
  readonly boardSecret: string;
  readonly submitToken: string | null;
  readonly leaseMs?: number;
  readonly hooks: HookCommands;
  /** Where hook commands run. */
  readonly hookCwd?: string;
  readonly hookTimeoutMs?: number;
  /** A chores' round (adoptions, notices, the tick, the hooks) every this many ms. */
  readonly tickMs: number;
}

/**
 * A board's parts on a process (assembleProcess): its host, made now, before the folds start (startFolds);
 * `start` serves it, then starts its chores. A part that fails to start stops what had started.
 */
export function buildBoard(parts: ProcessParts, settings: BoardSettings, ports: BoardPorts): UnstartedBoard {
  const { system, ports: edges } = parts;
  const { store, clock, log } = edges;
  const { peers } = ports;
  const made = ports.serve({
    system,
    store,
    clock,
    boardSecret: settings.boardSecret,
    submitToken: settings.submitToken,
    ...(settings.leaseMs !== undefined ? { leaseMs: settings.leaseMs } : {}),
    ...(peers ? { peers } : {}),
    log,
  });
  return {
    board: made.board,
    start: () =>
      startOrAbort(parts, async () => {
        const board = await made.start();
        parts.board = board;
        parts.chores = await startBoardChores(
          {
            ...choresOn(store, peers),
            clock,
            hooks: settings.hooks,
            ...(settings.hookTimeoutMs !== undefined ? { hookTimeoutMs: settings.hookTimeoutMs } : {}),
            ...(ports.runHook ? { runHook: ports.runHook } : {}),
            liveness: ports.liveness,
            ...(settings.hookCwd !== undefined ? { hookCwd: settings.hookCwd } : {}),
            log,
          },
          settings.tickMs,
        );
        return board;
      }),
  };
}
