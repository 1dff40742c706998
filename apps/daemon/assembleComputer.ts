import type { BoardAnswer } from '../../adapters/http/boardClient.ts';
import type { PushConnect } from '../../adapters/push/pushStreamClient.ts';
import type { SessionDriver } from '../../adapters/tmux/sessionDriver.ts';
import type { ReportedRow } from '../../runtime/store/computerEvents.ts';
import { BoardReport } from '../computer/boardReport.ts';
import { type DriverName, SessionCloser } from '../computer/closer/sessionCloser.ts';
import { Computer, type ComputerOptions } from '../computer/computer.ts';
import { type ProcessParts, startOrAbort } from './assembleProcess.ts';

/**
 * A computer's own edges: how it reaches its board, how its agents start, what it draws at random.
 * Each left out is the real one (HTTP and WebSocket, processes, crypto); the simulator gives its own.
 */
export interface ComputerPorts {
  /** The board's calls (claim, heartbeat, reply, complete): HTTP to `server` by default. */
  readonly board?: ComputerOptions['board'];
  /** How its push stream's socket opens: a WebSocket to the board by default. */
  readonly pushConnect?: PushConnect;
  /** Opens the channel its report goes over (BoardReport), once it runs; none: the board reads its log itself (they share a file). */
  readonly reportLink?: (() => ReportLink) | null;
  /** How its agents are started: processes by default. */
  readonly startAgent?: ComputerOptions['startAgent'];
  /** How its sessions' agents are read and stopped: a driver of its own, or `exec`/`tmux` by name (the default `exec`). */
  readonly sessionDriver?: DriverName | SessionDriver;
  /** This life's incarnation: a fresh random one by default. */
  readonly incarnation?: string;
  /** The draws of its push stream's reconnect jitter: Math.random by default. */
  readonly random?: () => number;
}

/** The channel a computer's report travels on (a BoardClient): its sends, and its sockets closed when it stops. */
export interface ReportLink {
  report(events: readonly ReportedRow[]): Promise<BoardAnswer>;
  close(): void;
}

/** What a computer is told: its id, its board, its agents and their limits, its sessions' rounds. */
export type ComputerSettings = Omit<
  ComputerOptions,
  'system' | 'store' | 'clock' | 'log' | 'onPushConnected' | 'board' | 'pushConnect' | 'startAgent' | 'incarnation' | 'random'
> & {
  /** The sessions' close rounds (docs/rules.md#sessions-hooks-notifications). */
  readonly sessions: { readonly tickMs: number; readonly quietMs: number; readonly tmuxSocket?: string };
};

/** A computer's parts made, not started yet. */
export interface BuiltComputer {
  readonly computer: Computer;
  readonly sessions: SessionCloser;
  /** Starts the computer, then its report, then its session closer; resolves with the computer running. */
  start(): Promise<Computer>;
}

/**
 * A computer's parts on a process (assembleProcess): the Computer, its report to the board, its session
 * closer, made now (the caller may hold them before they run: the simulator's crash reaches them);
 * `start` starts them in order, and a part that fails to start stops what had started.
 */
export function buildComputer(parts: ProcessParts, settings: ComputerSettings, ports: ComputerPorts): BuiltComputer {
  const { system, ports: edges } = parts;
  const { store, clock, log } = edges;
  const { sessions: rounds, ...options } = settings;
  const computer = new Computer({
    ...options,
    system,
    store,
    clock,
    log,
    ...(ports.board ? { board: ports.board } : {}),
    ...(ports.pushConnect ? { pushConnect: ports.pushConnect } : {}),
    ...(ports.startAgent ? { startAgent: ports.startAgent } : {}),
    ...(ports.incarnation !== undefined ? { incarnation: ports.incarnation } : {}),
    ...(ports.random ? { random: ports.random } : {}),
    // The board is back (its push stream connected again): the report's retry waiting goes at once.
    onPushConnected: () => parts.report?.boardIsBack(),
  });
  parts.computer = computer;
  const sessions = new SessionCloser({
    system,
    store,
    clock,
    computer: settings.computer,
    driver: ports.sessionDriver ?? 'exec',
    ...(rounds.tmuxSocket ? { tmuxSocket: rounds.tmuxSocket } : {}),
    settings: { tickMs: rounds.tickMs, quietMs: rounds.quietMs },
    ...(settings.killGraceMs !== undefined ? { killGraceMs: settings.killGraceMs } : {}),
    log,
  });
  return {
    computer,
    sessions,
    start: () =>
      startOrAbort(parts, async () => {
        await computer.start();
        if (ports.reportLink) {
          const link = ports.reportLink();
          parts.reportLink = link;
          const report = new BoardReport({
            store,
            computer: settings.computer,
            send: (events) => link.report(events),
            abandon: () => link.close(),
            clock,
            log,
          });
          parts.report = report;
          await report.start();
        }
        parts.sessions = sessions;
        await sessions.start();
        return computer;
      }),
  };
}

/** A computer's parts made and started (buildComputer). */
export function assembleComputer(parts: ProcessParts, settings: ComputerSettings, ports: ComputerPorts): Promise<Computer> {
  return buildComputer(parts, settings, ports).start();
}
