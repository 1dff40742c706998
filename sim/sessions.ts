import type { SessionAtRead, SessionDriver, StopOutcome } from '../adapters/tmux/sessionDriver.ts';
import type { Activity } from '../events/sessionEvents.ts';
import type { Execution } from './agents.ts';
import { Prng } from './prng.ts';
import type { LifeClock } from './scheduler.ts';

/** A session's agent stopped by a close: on which machine, by which life. */
export interface SessionStop {
  readonly machine: string;
  readonly life: string;
  readonly sessionId: string;
  /** `executions.length` then: what ran in it before the stop, and what after. */
  readonly executionsBefore: number;
}

export interface SessionsWorld {
  readonly executions: Execution[];
  /** Told as each stop happens, before it returns: the invariants look at the world as it is then. */
  sessionStopped(stop: SessionStop): void;
}

/** Of one machine: which life runs now (a turn of a dead life died with it). */
export interface SessionMachine {
  readonly machine: string;
  lifeName(): string | null;
}

/** The life whose closer drives the sessions: its name, and its clock (whose timers die with it). */
export interface SessionLife {
  readonly name: string;
  readonly clock: Pick<LifeClock, 'after'>;
}

/**
 * The sessions of one simulated machine as a session driver sees Claude's in tmux: a session's agent
 * is started by a turn in it and stays up between turns until a close stops it (its id is kept: a later
 * turn resumes it, and starts its agent again). A reading says `working` while a turn of the live life
 * runs in it, `idle` (stoppable) while its agent is up between turns, `gone` once stopped or never
 * started here; at times it fails (a tmux that does not answer), and the close waits for the next
 * round. Reading and stopping take time (up to 3 s and 2 s, a loaded machine's tmux and a TERM's grace),
 * in which a turn may start. Each stop is told to the world, whose invariants judge it. Its draws are its own (seeded from
 * the world's seed and the machine), so the rest of a seed's history is drawn as it was without it.
 */
export class SimSessions {
  /** Each session's last stop: the executions before it ran before it. */
  private readonly stoppedAt = new Map<string, number>();
  private readonly prng: Prng;

  constructor(
    private readonly machine: SessionMachine,
    private readonly world: SessionsWorld,
    seed: number,
  ) {
    let hash = seed >>> 0;
    for (const c of machine.machine) hash = (Math.imul(hash, 31) + c.charCodeAt(0)) >>> 0;
    this.prng = new Prng(hash ^ 0x5e551045);
  }

  /** The turns of this machine in the session since its last stop: its agent is up if any ran. */
  private turnsSinceStop(sessionId: string): Execution[] {
    const from = this.stoppedAt.get(sessionId) ?? 0;
    const prefix = `${this.machine.machine}#`;
    return this.world.executions.slice(from).filter((e) => e.session === sessionId && e.life.startsWith(prefix));
  }

  /** The driver of one life's closer: its waits on that life's clock. */
  driver(closer: SessionLife): SessionDriver {
    const wait = (ms: number) => new Promise<void>((resolve) => closer.clock.after(ms, resolve));
    return {
      name: 'tmux',
      read: async (session: SessionAtRead): Promise<Activity> => {
        await wait(this.prng.int(0, 3_000));
        if (this.prng.chance(0.05)) throw new Error('the sim driver could not read it');
        const life = this.machine.lifeName();
        const turns = this.turnsSinceStop(session.sessionId);
        const turn = turns.find((e) => e.life === life && e.endedAt === null);
        if (turn) return { presence: 'running', turn: 'working', mark: null, target: null, seen: `run ${turn.runId} is in a turn in it` };
        if (turns.length > 0)
          return { presence: 'running', turn: 'idle', mark: null, target: `sim:${session.sessionId}`, seen: 'its agent waits between turns' };
        return { presence: 'gone', turn: 'unknown', mark: null, target: null, seen: 'no agent of it is up on this machine' };
      },
      stop: async (target: string): Promise<StopOutcome> => {
        const sessionId = target.replace(/^sim:/, '');
        await wait(this.prng.int(0, 2_000));
        const executionsBefore = this.world.executions.length;
        this.world.sessionStopped({ machine: this.machine.machine, life: closer.name, sessionId, executionsBefore });
        this.stoppedAt.set(sessionId, executionsBefore);
        return { ok: true, detail: `the agent of session ${sessionId} stopped, its id kept` };
      },
    };
  }
}
