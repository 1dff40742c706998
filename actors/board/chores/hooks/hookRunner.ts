import type { Subscription } from 'rxjs';
import type { Clock } from '../../../runtime/clock.ts';
import type { DomainEvent } from '../../../../events/catalog.ts';
import type { EventStore } from '../../../../events/store/eventStore.ts';
import { writerIsGone } from '../../../runtime/processes.ts';
import { writerOf } from '../../../runtime/writer.ts';
import { DEFAULT_HOOK_TIMEOUT_MS, type HookOutcome, runHookCommand } from './hookCommand.ts';
import { type HookCall, type HookCommands, hookOf, hookPayload } from './hookNames.ts';

/** The hooks consumer's stream: its takes move the hooks cursor, its records say how each hook ended. */
export const HOOKS_STREAM = 'outbox:hooks';
const PAGE = 500;

export interface HookRunnerOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly commands: HookCommands;
  readonly timeoutMs?: number;
  /** Where hooks run; the daemon's folder by default of the caller. */
  readonly cwd?: string;
  readonly log?: (line: string) => void;
}

/**
 * Runs the board's hooks (SPEC section 5), at most once each. The events that call for hooks are
 * taken, and the hooks cursor moved past them, in one append to `outbox:hooks` at the version this
 * process last saw: of two processes (or a retried append) only one take commits, so no hook is ever
 * taken twice. The hooks run once the take has committed, each in the background (a slow hook holds up
 * neither the round nor the other hooks), and each one's exit is recorded (`hook.exited`). A hook whose
 * taker died before its exit was recorded is recorded `hook.interrupted` by the next start, and not
 * run again: a hook command is not known to be safe to repeat.
 */
export class HookRunner {
  private version = 0;
  private cursor = 0;
  private running: Promise<number> | null = null;
  private rerun = false;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly lanes = new Map<string, string | null>();

  constructor(private readonly options: HookRunnerOptions) {}

  /** Whether any hook is configured: a board with none takes nothing (and moves no cursor). */
  get active(): boolean {
    return Object.values(this.options.commands).some(Boolean);
  }

  /**
   * Loads the cursor and settles hooks a dead process took but never saw end. `startAt` is where a
   * board that never ran hooks begins: the present, so that history is never replayed.
   */
  async open(startAt?: number): Promise<void> {
    const { store } = this.options;
    const pending = new Map<number, DomainEvent>();
    this.version = 0;
    for (const event of await store.readStream(HOOKS_STREAM)) {
      this.version = event.version;
      if (event.type === 'outbox.taken') {
        this.cursor = event.data.through;
        for (const effect of event.data.effects) pending.set(effect, event);
      } else if (event.type === 'hook.exited' || event.type === 'hook.interrupted' || event.type === 'outbox.performed' || event.type === 'outbox.interrupted') {
        pending.delete(event.data.effect);
      }
    }
    if (this.version === 0 && startAt !== undefined && startAt > 0) {
      const result = await store.append({
        expected: { [HOOKS_STREAM]: 0 },
        events: [{ stream: HOOKS_STREAM, type: 'outbox.taken', data: { through: startAt, effects: [] }, at: this.options.clock.now() }],
      });
      // Another board started first: its start is ours too.
      if (!result.ok) return this.open(startAt);
      this.cursor = startAt;
      this.version = result.events[0]!.version;
    }
    for (const [effect, taken] of pending) {
      if (!takerIsGone(taken, store.writer)) continue;
      const [event] = await store.readAll(effect - 1, 1);
      // Only events that call for a hook are ever taken, and the log never changes under a seq.
      const call = event && event.seq === effect ? hookOf(event) : null;
      if (call === null) throw new Error(`the hooks take of seq ${taken.seq} names seq ${effect}, which calls for no hook`);
      const detail = `taken by ${taken.actor}, which stopped before the hook's end was recorded: it is not run again`;
      // At the version read: of two boards opening at once, only one records it.
      const result = await store.append({
        expected: { [HOOKS_STREAM]: this.version },
        events: [{ stream: HOOKS_STREAM, type: 'hook.interrupted', at: this.options.clock.now(), data: { effect, hook: call.hook, ...ids(call), detail } }],
      });
      if (!result.ok) return this.open(startAt);
      this.version = result.events[0]!.version;
    }
  }

  /** Takes every hook past the cursor and starts them; resolves with how many it started (not when they end). */
  drain(): Promise<number> {
    if (this.stopped || !this.active) return Promise.resolve(0);
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    this.running = (async () => {
      let started = 0;
      try {
        do {
          this.rerun = false;
          started += await this.takeAll();
        } while (this.rerun && !this.stopped);
      } catch (error) {
        if (!this.stopped) throw error;
      } finally {
        this.running = null;
      }
      return started;
    })();
    return this.running;
  }

  /** Drains whenever the log grows, until unsubscribed. */
  follow(): Subscription {
    return this.options.store.subscribe(this.cursor).subscribe(() => void this.drain().catch((error) => this.options.log?.(`hooks: ${(error as Error).message}`)));
  }

  /** Resolves once every hook started so far has ended and its end is recorded (or `ms` passed). */
  async settle(ms = 30_000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (this.inFlight.size > 0 || this.running) {
      if (Date.now() >= deadline) return false;
      await Promise.race([Promise.all([...this.inFlight, this.running]), new Promise((resolve) => setTimeout(resolve, deadline - Date.now()).unref())]);
    }
    return true;
  }

  /** Takes nothing more; hooks already running go on, and their ends are recorded while the log is open. */
  stop(): void {
    this.stopped = true;
  }

  private async takeAll(): Promise<number> {
    const { store, clock, commands } = this.options;
    let started = 0;
    while (!this.stopped) {
      const page = await store.readAll(this.cursor, PAGE);
      if (page.length === 0) break;
      const due = page.filter((event) => {
        const call = hookOf(event);
        return call !== null && Boolean(commands[call.hook]);
      });
      const through = page[page.length - 1]!.seq;
      if (due.length === 0) {
        // Nothing to take: the cursor moves in memory only, or every take would be an event to take past.
        this.cursor = through;
        continue;
      }
      const taken = await store.append({
        expected: { [HOOKS_STREAM]: this.version },
        events: [{ stream: HOOKS_STREAM, type: 'outbox.taken', data: { through, effects: due.map((e) => e.seq) }, at: clock.now() }],
      });
      if (!taken.ok) {
        // Another process moved the cursor first: those hooks are its. Start again from its cursor.
        await this.reload();
        continue;
      }
      this.version = taken.events[0]!.version;
      this.cursor = through;
      for (const event of due) {
        this.start(event);
        started++;
      }
    }
    return started;
  }

  private start(event: DomainEvent): void {
    const call = hookOf(event)!;
    const command = this.options.commands[call.hook]!;
    const run = (async () => {
      let outcome: HookOutcome;
      try {
        const payload = hookPayload(call, event.at, await this.laneOf(call, event));
        outcome = await runHookCommand(command, payload, {
          clock: this.options.clock,
          timeoutMs: this.options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
          ...(this.options.cwd ? { cwd: this.options.cwd } : {}),
        });
      } catch (error) {
        outcome = { ok: false, exitCode: null, signal: null, error: (error as Error).message.slice(0, 500), outputTail: '', durationMs: 0 };
      }
      await this.record({
        stream: HOOKS_STREAM,
        type: 'hook.exited',
        at: this.options.clock.now(),
        data: { effect: event.seq, hook: call.hook, ...ids(call), ...outcome, error: outcome.error?.slice(0, 500) ?? null },
      }).catch((error) => {
        // The log closed under it (a shutdown): the next start records it interrupted.
        if (!this.stopped) this.options.log?.(`hooks: the end of ${call.hook} for seq ${event.seq} could not be recorded: ${(error as Error).message}`);
      });
    })();
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  /** The lane a run or a session belongs to, from its own stream: it never changes, so it is kept. */
  private async laneOf(call: HookCall, event: DomainEvent): Promise<string | null> {
    const key = call.runId ? `run:${call.runId}` : call.sessionId ? event.stream : null;
    if (key === null) return null;
    if (this.lanes.has(key)) return this.lanes.get(key)!;
    let lane: string | null = null;
    for (const e of await this.options.store.readStream(key)) {
      if (e.type === 'board.run.queued') lane = e.data.lane;
      else if (e.type === 'session.run.ended' && e.data.lane) lane = e.data.lane;
    }
    if (call.runId) this.lanes.set(key, lane);
    return lane;
  }

  private async record(event: Parameters<EventStore['append']>[0]['events'][number]): Promise<void> {
    const result = await this.options.store.append({ expected: { [HOOKS_STREAM]: 'any' }, events: [event] });
    // Only a record that directly follows what this process saw keeps its view current; otherwise another
    // process wrote in between, and the next take must fail and reload rather than skip its take.
    if (result.ok && result.events[0]!.version === this.version + 1) this.version++;
  }

  private async reload(): Promise<void> {
    for (const event of await this.options.store.readStream(HOOKS_STREAM, this.version)) {
      this.version = event.version;
      if (event.type === 'outbox.taken') this.cursor = Math.max(this.cursor, event.data.through);
    }
  }
}

function ids(call: HookCall): { runId?: string; sessionId?: string } {
  return { ...(call.runId ? { runId: call.runId } : {}), ...(call.sessionId ? { sessionId: call.sessionId } : {}) };
}

/** A take by a process of this host that no longer runs. One on another host cannot be probed: it is left. */
function takerIsGone(taken: DomainEvent, self: string): boolean {
  return taken.actor !== self && writerIsGone(writerOf(taken.actor));
}
