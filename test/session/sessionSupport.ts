import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { onTestFinished } from 'vitest';
import type { SessionDriver, StopOutcome } from '../../adapters/tmux/sessionDriver.ts';
import { SessionCloser, type SessionCloserOptions } from '../../apps/computer/closer/sessionCloser.ts';
import { sessionStream } from '../../apps/computer/closer/sessionStreams.ts';
import type { DomainEvent, EventOf, EventType } from '../../events/catalog.ts';
import type { Activity } from '../../events/sessionEvents.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import { groupAlive } from '../../runtime/actors/processes.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';

export const COMPUTER = 'c1';

/** A closer on `store` with its own actor system, stopped when the test ends. */
export function closerOn(store: EventStore, clock: Clock, options: Partial<SessionCloserOptions> = {}): SessionCloser {
  const system = startActorSystem({ onError: () => {} });
  const closer = new SessionCloser({ system, store, clock, computer: COMPUTER, ...options });
  onTestFinished(() => {
    closer.stop();
    stopSystem(system);
  });
  return closer;
}

/** Records the close intent a settled run would, straight into the session's stream. */
export async function intend(
  closer: SessionCloser,
  sessionId: string,
  runId: string,
  over: Partial<{ pid: number | null; bound: boolean; launchedAt: number | null }> = {},
) {
  return closer.actors.step(sessionId, (_, at) => ({
    stream: sessionStream(COMPUTER, sessionId),
    type: 'session.run.ended',
    data: { sessionId, runId, lane: 'L', bound: over.bound ?? true, launchedAt: over.launchedAt ?? null, pid: over.pid ?? null },
    at,
  }));
}

/**
 * A driver for what is outside the machine, read from a script the test sets: what each session
 * reads as now, and every read and stop it was asked for, to count.
 */
export class ScriptedDriver implements SessionDriver {
  readonly name = 'exec' as const;
  readonly reads: string[] = [];
  readonly stops: string[] = [];
  private readonly now = new Map<string, Activity | Error>();

  set(sessionId: string, reading: Activity | Error): void {
    this.now.set(sessionId, reading);
  }

  async read({ sessionId }: { sessionId: string }): Promise<Activity> {
    this.reads.push(sessionId);
    const reading = this.now.get(sessionId) ?? gone();
    if (reading instanceof Error) throw reading;
    return reading;
  }

  async stop(target: string): Promise<StopOutcome> {
    this.stops.push(target);
    return { ok: true, detail: `${target} stopped` };
  }
}

export const idle = (target = 'pgid:4242'): Activity => ({ presence: 'running', turn: 'idle', mark: null, target, seen: 'read idle' });
export const working = (): Activity => ({ presence: 'running', turn: 'working', mark: null, target: null, seen: 'run r2 is executing in it' });
export const gone = (): Activity => ({ presence: 'gone', turn: 'unknown', mark: null, target: null, seen: 'nothing left' });

/** The events of one type, typed by it. */
export const ofType = <T extends EventType>(events: readonly DomainEvent[], type: T) => events.filter((e): e is EventOf<T> => e.type === type);

/** A lock of this host whose process is alive for as long as the test runs (a `sleep` of its own). */
export function liveSiblingLock(): { lock: string; kill: () => Promise<void> } {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  return {
    lock: `${hostname()}:${child.pid}`,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A process group of its own standing in for an agent's process: a pid a kill can be checked on. */
export function agentGroup(): number {
  const child = spawn('sleep', ['600'], { stdio: 'ignore', detached: true });
  child.unref();
  const pid = child.pid!;
  onTestFinished(() => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone already
    }
  });
  return pid;
}

export async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export { groupAlive };
