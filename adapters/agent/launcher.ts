import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The daemon's end of the agent launcher (`launcherMain.mjs`): a small helper process that forks the
 * agent commands, so that no fork copies the daemon's page tables or stalls its event loop. One is
 * started on first use and shared; if it dies, the agents it had can no longer be heard (each is told
 * `lost`), and the next launch starts another.
 */

export interface LaunchRequest {
  /** A shell command line, run as `/bin/sh -c command` in a process group of its own. */
  readonly command: string;
  readonly cwd: string;
  /** Laid over the daemon's environment; an `undefined` value removes the variable. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Written to the command's stdin, which is then closed. */
  readonly prompt: string;
}

/** What the launcher tells of one agent, after `launch` resolved with its pid. */
export interface LaunchListener {
  stdout(chunk: string): void;
  stderr(chunk: string): void;
  exit(code: number | null, signal: NodeJS.Signals | null): void;
  /** Both output streams closed. */
  close(): void;
  /** The launcher died: no more output, exit or close will come for this agent. */
  lost(reason: string): void;
}

export type Launched =
  | {
      readonly pid: number;
      readonly id: number;
      /** When it started, in clock ticks since boot, read by the launcher before it could reap it; 0 when unknown. */
      readonly startTicks: number;
    }
  | { readonly error: string };

const LAUNCHER_MAIN = fileURLToPath(new URL('./launcherMain.mjs', import.meta.url));

type LauncherMessage =
  | { id: number; kind: 'spawned'; pid: number; startTicks?: number }
  | { id: number; kind: 'failed'; message: string }
  | { id: number; kind: 'stdout' | 'stderr'; data: string }
  | { id: number; kind: 'exit'; code: number | null; signal: NodeJS.Signals | null }
  | { id: number; kind: 'close' };

/**
 * A message of the launcher, checked by hand rather than with a schema: several come for every run
 * (each chunk of output is one), and this is the whole of the protocol.
 */
export function launcherMessage(raw: unknown): LauncherMessage | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const m = raw as Record<string, unknown>;
  if (typeof m.id !== 'number') return null;
  const nullableInt = (v: unknown) => v === null || Number.isInteger(v);
  switch (m.kind) {
    case 'stdout':
    case 'stderr':
      return typeof m.data === 'string' ? (m as LauncherMessage) : null;
    case 'spawned':
      return Number.isInteger(m.pid) &&
        (m.pid as number) > 0 &&
        (m.startTicks === undefined || (Number.isInteger(m.startTicks) && (m.startTicks as number) >= 0))
        ? (m as LauncherMessage)
        : null;
    case 'failed':
      return typeof m.message === 'string' ? (m as LauncherMessage) : null;
    case 'exit':
      return nullableInt(m.code) && (m.signal === null || typeof m.signal === 'string') ? (m as LauncherMessage) : null;
    case 'close':
      return m as LauncherMessage;
    default:
      return null;
  }
}

interface Pending {
  readonly listener: LaunchListener;
  started: ((launched: Launched) => void) | null;
}

export class AgentLauncher {
  private child: ChildProcess | null = null;
  private nextId = 0;
  private readonly agents = new Map<number, Pending>();

  launch(request: LaunchRequest, listener: LaunchListener): Promise<Launched> {
    const child = this.running();
    const id = ++this.nextId;
    return new Promise<Launched>((started) => {
      this.agents.set(id, { listener, started });
      this.holdOpen();
      // JSON has no undefined: a removed variable travels as null.
      const env = Object.fromEntries(Object.entries(request.env ?? {}).map(([name, value]) => [name, value ?? null]));
      child.send({ op: 'spawn', id, command: request.command, cwd: request.cwd, env, prompt: request.prompt });
    });
  }

  /** Stops waiting for an agent's output (a process it left behind can hold the pipes open for ever). */
  closeOutput(id: number): void {
    if (this.agents.has(id)) this.child?.send({ op: 'close-output', id });
  }

  /** The launcher's pid while it runs. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Ends the launcher; agents still running are told `lost`. */
  close(): void {
    this.child?.disconnect();
  }

  private running(): ChildProcess {
    if (this.child) return this.child;
    // Without the daemon's NODE_OPTIONS (a TypeScript loader, a profiler), which the launcher hands on to agents.
    const env: NodeJS.ProcessEnv = { ...process.env, RUNLEDGER_DAEMON_NODE_OPTIONS: process.env.NODE_OPTIONS ?? '' };
    delete env.NODE_OPTIONS;
    // detached: a session of its own, like the agents it forks. A Ctrl-C in the daemon's terminal goes
    // to the whole foreground group; it is the daemon's to hear (it drains), and a launcher that died
    // of it would take every running turn with it. It still ends with the daemon: its channel closes.
    const child = fork(LAUNCHER_MAIN, [], {
      execArgv: [],
      env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
      detached: true,
    });
    child.on('message', (message) => this.received(message));
    child.on('error', () => {
      // A failed send or kill; the exit that follows a dead launcher is what counts.
    });
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      const reason = `the agent launcher (pid ${child.pid}) ended (${signal ?? `exit ${code}`})`;
      const agents = [...this.agents.values()];
      this.agents.clear();
      for (const pending of agents) {
        if (pending.started) pending.started({ error: reason });
        else pending.listener.lost(reason);
      }
    });
    this.child = child;
    return child;
  }

  private received(raw: unknown): void {
    const message = launcherMessage(raw);
    if (!message) {
      // Our own helper speaking out of turn is a bug to see, not a reason to stop the others' runs.
      process.emitWarning(`the agent launcher sent a message not understood: ${JSON.stringify(raw).slice(0, 200)}`);
      return;
    }
    const pending = this.agents.get(message.id);
    if (!pending) return;
    switch (message.kind) {
      case 'spawned':
        pending.started?.({ pid: message.pid, id: message.id, startTicks: message.startTicks ?? 0 });
        pending.started = null;
        return;
      case 'failed':
        this.agents.delete(message.id);
        this.letGo();
        pending.started?.({ error: message.message });
        return;
      case 'stdout':
        pending.listener.stdout(message.data);
        return;
      case 'stderr':
        pending.listener.stderr(message.data);
        return;
      case 'exit':
        pending.listener.exit(message.code, message.signal);
        return;
      case 'close':
        this.agents.delete(message.id);
        this.letGo();
        pending.listener.close();
    }
  }

  // The channel keeps the daemon's event loop alive only while an agent is out: an idle launcher must
  // not hold a daemon (or a test) open at its end.
  private holdOpen(): void {
    this.child?.ref();
    this.child?.channel?.ref();
  }

  private letGo(): void {
    if (this.agents.size > 0) return;
    this.child?.unref();
    this.child?.channel?.unref();
  }
}

let shared: AgentLauncher | null = null;

/** The launcher this process's agents are forked by. */
export function sharedLauncher(): AgentLauncher {
  shared ??= new AgentLauncher();
  return shared;
}
