import type { Clock } from '../../runtime/actors/clock.ts';
import { type ActorSystem, startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import { ProjectionKeeper } from '../../runtime/folds/keeper/projectionKeeper.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import type { BoardServer } from '../board/boardServer.ts';
import type { RunningChores } from '../board/chores/boardChores.ts';
import type { BoardReport } from '../computer/boardReport.ts';
import type { SessionCloser } from '../computer/closer/sessionCloser.ts';
import type { Computer } from '../computer/computer.ts';

/**
 * The edges every process of runledger runs on, as the daemon has them for real and the simulator
 * (sim/) plays them: time, the log, the narration. A board's and a computer's own edges (network,
 * agents, randomness) are in assembleBoard.ts and assembleComputer.ts.
 */
export interface ProcessPorts {
  /** Every timer of the process, its actors' included (passivation, a query's timeout): the simulator's is virtual. */
  readonly clock: Clock;
  /** The log, opened by the caller (a file, PostgreSQL, a simulated disk). */
  readonly store: EventStore;
  /** How the log is closed when the process stops: `store.close()` by default; the simulator's disk outlives the process. */
  readonly closeStore?: () => Promise<void>;
  readonly log: (line: string) => void;
}

/**
 * What one process started, each part null until it has: filled in by the assemblies as they go, so
 * that a start that fails stops exactly what had started (abortProcess), and a stop takes the parts
 * down in their order (closeProcess).
 */
export interface ProcessParts {
  readonly ports: ProcessPorts;
  readonly system: ActorSystem;
  readonly keeper: ProjectionKeeper;
  board: BoardServer | null;
  chores: RunningChores | null;
  retention: (() => Promise<void>) | null;
  computer: Computer | null;
  sessions: SessionCloser | null;
  report: BoardReport | null;
  /** The channel the report goes over, closed after it stopped. */
  reportLink: { close(): void } | null;
  /** Process locks held (a board's file, a computer's id), released last. */
  readonly releases: (() => void)[];
}

/**
 * The actor system and the projection keeper on the log: what a board and a computer both run on.
 * Nothing runs yet: the board's host is made before the folds catch up (startFolds).
 */
export function assembleProcess(ports: ProcessPorts): ProcessParts {
  const { store, clock, log } = ports;
  const system = startActorSystem({
    clock,
    // An outage of the log (a full disk, a lock, a server down) is told once by the store, and each
    // actor it stops folds again at its next message: not once more per actor and per message.
    onError: (r) => {
      if (r.error instanceof LogUnwritableError) return;
      log(`actor ${r.actor}: ${r.phase} failed (${r.decision}): ${(r.error as Error)?.message ?? r.error}`);
    },
  });
  return {
    ports,
    system,
    keeper: new ProjectionKeeper(store, projections, clock, { log }),
    board: null,
    chores: null,
    retention: null,
    computer: null,
    sessions: null,
    report: null,
    reportLink: null,
    releases: [],
  };
}

/** The keeper catches up with the log; if it cannot, the process stops. */
export function startFolds(parts: ProcessParts): Promise<void> {
  return startOrAbort(parts, () => parts.keeper.start());
}

/** Runs one step of a start; if it fails, whatever had started stops (abortProcess) and the error goes on. */
export async function startOrAbort<T>(parts: ProcessParts, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    await abortProcess(parts);
    throw error;
  }
}

const aborted = new WeakSet<ProcessParts>();

/**
 * A start that failed: whatever had started stops before the log closes (a follower left running
 * would read it closed), without waiting out what is in flight.
 */
export async function abortProcess(parts: ProcessParts): Promise<void> {
  // A step of an assembly fails inside the caller's: the parts stop once.
  if (aborted.has(parts)) return;
  aborted.add(parts);
  await parts.report?.stop(0);
  parts.reportLink?.close();
  parts.sessions?.stop();
  await parts.chores?.stop(0);
  await parts.retention?.();
  parts.computer?.stop();
  await parts.board?.close();
  for (const release of parts.releases) release();
  await parts.keeper.stop();
  stopSystem(parts.system);
  await closeStore(parts.ports);
}

/**
 * A stop: the chores and retention first (nothing new decided), the sessions settled, the computer,
 * the board, the folds, the actors; the report last of what writes, then the log and the locks.
 */
export async function closeProcess(parts: ProcessParts): Promise<void> {
  await parts.chores?.stop();
  await parts.retention?.();
  parts.sessions?.stop();
  await parts.sessions?.settled();
  parts.computer?.stop();
  await parts.board?.close();
  await parts.keeper.stop();
  stopSystem(parts.system);
  // Last of what writes: what this computer recorded, its drain's last decisions included (a settle the
  // queue and the sessions answer after the computer stopped), reaches the board before it goes
  // (bounded: a board that is down is not waited for; the next start sends what is left).
  await parts.report?.stop();
  parts.reportLink?.close();
  await closeStore(parts.ports);
  for (const release of parts.releases) release();
}

function closeStore(ports: ProcessPorts): Promise<void> {
  return ports.closeStore ? ports.closeStore() : ports.store.close();
}
