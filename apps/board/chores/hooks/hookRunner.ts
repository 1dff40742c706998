import type { DomainEvent } from '../../../../events/catalog.ts';
import { messageOf } from '../../../../events/thrown.ts';
import type { Clock } from '../../../../runtime/actors/clock.ts';
import type { EffectConsumer, EffectRecord } from '../../../../runtime/actors/effectConsumer.ts';
import { Outbox } from '../../../../runtime/actors/outbox.ts';
import { stderrLog } from '../../../../runtime/actors/untilRecorded.ts';
import type { AppendLease, EventStore } from '../../../../runtime/store/eventStore.ts';
import { DEFAULT_HOOK_TIMEOUT_MS, type HookCommandOptions, type HookOutcome, runHookCommand } from './hookCommand.ts';
import { type HookCall, type HookCommands, type HookPayload, hookOf, hookPayload } from './hookNames.ts';

/** How a hook command is run; `effect` is the seq of the event it answers. */
export type RunHook = (command: string, payload: HookPayload, options: HookCommandOptions, effect: number) => Promise<HookOutcome>;

/** The hooks consumer's stream: its takes move the hooks cursor, its records say how each hook ended. */
export const HOOKS_STREAM = 'outbox:hooks';

export interface HookRunnerOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly commands: HookCommands;
  readonly timeoutMs?: number;
  /** Where hooks run; the daemon's folder by default of the caller. */
  readonly cwd?: string;
  readonly log?: (line: string) => void;
  /** Test seam (the simulator's hook processes): how a hook command is run; `/bin/sh -c` by default. */
  readonly runHook?: RunHook;
  /** On a log of several boards: the chores' lease, which each hook is taken, started and recorded under (effectConsumer.ts, EpochTakes). */
  readonly lease?: () => AppendLease | null;
}

/**
 * Runs the board's hooks (docs/rules.md#sessions-hooks-notifications), at most once each: the outbox's consumer `hooks`. The
 * events that call for a configured hook are taken, and the hooks cursor moved past them, in one
 * append to `outbox:hooks`, so no hook is ever taken twice. The hooks run once the take has committed,
 * each in the background (a slow hook holds up neither the round nor the other hooks), and each one's
 * exit is recorded (`hook.exited`). A hook whose taker died before its exit was recorded is recorded
 * `hook.interrupted` by the next start, and not run again: a hook command is not known to be safe to
 * repeat. On a log of several boards, a hook is run and its exit recorded only under the epoch of the
 * chores' lease it was taken under, and the holder of a later epoch records it interrupted (a taker
 * that was only paused starts nothing after, nor records its exit). `drain` resolves with how many hooks it started (not when they end); `settle` waits for them.
 */
export class HookRunner extends Outbox<HookCall> {
  constructor(private readonly options: HookRunnerOptions) {
    super(options.store, hookConsumer(options), options.clock);
  }

  /** Whether any hook is configured: a board with none takes nothing (and moves no cursor). */
  get active(): boolean {
    return Object.values(this.options.commands).some(Boolean);
  }

  override drain(): Promise<number> {
    return this.active ? super.drain() : Promise.resolve(0);
  }
}

function hookConsumer(options: HookRunnerOptions): EffectConsumer<HookCall> {
  const laneOf = lanes(options.store);
  return {
    name: 'hooks',
    delivery: 'at-most-once',
    // Every hook due runs at once, each in the background.
    concurrency: Number.POSITIVE_INFINITY,
    background: { log: options.log ?? stderrLog },
    ...(options.lease ? { lease: options.lease } : {}),
    effectOf(event) {
      const call = hookOf(event);
      return call !== null && options.commands[call.hook] ? call : null;
    },
    async perform(call, event, mayStart) {
      let outcome: HookOutcome;
      try {
        const payload = hookPayload(call, event.at, await laneOf(call, event));
        // Nothing awaited from here to the spawn: a taker paused since its take, whose epoch another board
        // holds now, starts nothing (that board may have recorded it interrupted already). Its record says
        // so, under the take's epoch: committed only if this board holds that epoch again.
        if (mayStart && !mayStart())
          return { record: interruptedRecord(event.seq, call, "not started: the chores' lease it was taken under was lost first") };
        const run = options.runHook ?? runHookCommand;
        outcome = await run(
          options.commands[call.hook]!,
          payload,
          { clock: options.clock, timeoutMs: options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS, ...(options.cwd ? { cwd: options.cwd } : {}) },
          event.seq,
        );
      } catch (error) {
        outcome = { ok: false, exitCode: null, signal: null, error: messageOf(error).slice(0, 500), outputTail: '', durationMs: 0 };
      }
      return {
        record: {
          type: 'hook.exited',
          data: { effect: event.seq, hook: call.hook, ...ids(call), ...outcome, error: outcome.error?.slice(0, 500) ?? null },
        },
      };
    },
    interrupted(effect, event, take) {
      const detail = `taken by ${take.actor}, which stopped before the hook's end was recorded: it is not run again`;
      // A row this version cannot read (a newer board took it): which hook it called for is unknown here,
      // so the generic record settles it; a board must still start after a downgrade.
      if (!event) return { type: 'outbox.interrupted', data: { effect, detail } };
      // Only events that call for a hook are ever taken, and the log never changes under a seq.
      const call = hookOf(event);
      if (call === null) throw new Error(`the hooks take of seq ${take.seq} names seq ${effect}, which calls for no hook`);
      return interruptedRecord(effect, call, detail);
    },
  };
}

function interruptedRecord(effect: number, call: HookCall, detail: string): EffectRecord {
  return { type: 'hook.interrupted', data: { effect, hook: call.hook, ...ids(call), detail } };
}

/** The lane a run or a session belongs to, from its own stream: a run's never changes, so it is kept. */
function lanes(store: EventStore): (call: HookCall, event: DomainEvent) => Promise<string | null> {
  const known = new Map<string, string | null>();
  return async (call, event) => {
    const key = call.runId ? `run:${call.runId}` : call.sessionId ? event.stream : null;
    if (key === null) return null;
    if (known.has(key)) return known.get(key)!;
    let lane: string | null = null;
    for (const e of await store.readStream(key)) {
      if (e.type === 'board.run.queued') lane = e.data.lane;
      else if (e.type === 'session.run.ended' && e.data.lane) lane = e.data.lane;
    }
    if (call.runId) known.set(key, lane);
    return lane;
  };
}

function ids(call: HookCall): { runId?: string; sessionId?: string } {
  return { ...(call.runId ? { runId: call.runId } : {}), ...(call.sessionId ? { sessionId: call.sessionId } : {}) };
}
