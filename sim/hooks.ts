import type { HookOutcome } from '../apps/board/chores/hooks/hookCommand.ts';
import type { HookCommands } from '../apps/board/chores/hooks/hookNames.ts';
import type { RunHook } from '../apps/board/chores/hooks/hookRunner.ts';
import type { Prng } from './prng.ts';
import type { LifeClock } from './scheduler.ts';

/** The world board's hooks: every hook the sim's board decisions call for (a session's close is the computers'). */
export const SIM_HOOKS: HookCommands = {
  on_run_claimed: 'sim-hook claimed',
  on_run_started: 'sim-hook started',
  on_run_ended: 'sim-hook ended',
  on_tick: 'sim-hook tick',
};

/** A hook that hangs is killed after this long (the board's `hookTimeoutMs` in the sim). */
export const SIM_HOOK_TIMEOUT_MS = 30_000;

/** One hook command started: which event it answers (its seq on the board's log), in which board life. */
export interface HookInvocation {
  readonly effect: number;
  readonly hook: string;
  readonly runId: string | null;
  readonly life: number;
  readonly startedAt: number;
  /** Set when it ended while its life still ran (what its exit record must say); null while it runs or once cut. */
  exitCode: number | null;
  endedAt: number | null;
  /** Its board life died while it ran: its end can never be recorded (docs/rules.md#the-log: recorded interrupted, never run again). */
  cut: boolean;
}

/**
 * The hook processes of one board life, as `runHookCommand` would run them: each answers (exit 0) after
 * a while, fails (exit 1), or hangs until the board's timeout kills it; all on the life's clock, so a
 * board crash cuts those still running (their ends are never seen by that life). A dead life starts none.
 */
export function simHookRunner(w: {
  readonly life: number;
  readonly clock: LifeClock;
  readonly prng: Prng;
  readonly invoked: (invocation: HookInvocation) => void;
  readonly running: Set<HookInvocation>;
}): RunHook {
  return (_command, payload, options, effect) => {
    const owner = w.clock.owner;
    // A process that died spawns nothing: what it took is settled by the next life.
    if (!owner.alive) return new Promise<HookOutcome>(() => undefined);
    const invocation: HookInvocation = {
      effect,
      hook: payload.hook,
      runId: payload.run_id ?? null,
      life: w.life,
      startedAt: w.clock.now(),
      exitCode: null,
      endedAt: null,
      cut: false,
    };
    w.running.add(invocation);
    w.invoked(invocation);
    const roll = w.prng.next();
    const hangs = roll < 0.05;
    const exitCode = hangs ? null : roll < 0.15 ? 1 : 0;
    const ms = hangs ? options.timeoutMs : w.prng.int(20, 4_000);
    return new Promise<HookOutcome>((resolve) => {
      w.clock.after(ms, () => {
        w.running.delete(invocation);
        invocation.exitCode = exitCode;
        invocation.endedAt = w.clock.now();
        resolve({
          ok: exitCode === 0,
          exitCode,
          signal: hangs ? 'SIGKILL' : null,
          error: hangs ? `killed after ${Math.round(options.timeoutMs / 1000)} s` : null,
          outputTail: '',
          durationMs: ms,
        });
      });
    });
  };
}
