import { spawn } from 'node:child_process';
import { TailBuffer } from '../../../../actors/run/tailBuffer.ts';
import { HOOK_OUTPUT_TAIL_CHARS } from '../../../../events/hookEvents.ts';
import { messageOf } from '../../../../events/thrown.ts';
import type { Clock } from '../../../../runtime/actors/clock.ts';
import { signalGroup } from '../../../../runtime/actors/processes.ts';
import type { HookPayload } from './hookNames.ts';

export interface HookOutcome {
  readonly ok: boolean;
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Why it could not start, or why it was stopped; null when it ended by itself. */
  readonly error: string | null;
  readonly outputTail: string;
  readonly durationMs: number;
}

export interface HookCommandOptions {
  readonly clock: Clock;
  /** A hook still running after this long is killed, its whole process group with it. */
  readonly timeoutMs: number;
  readonly cwd?: string;
}

/** A hook that hangs must not hold its record (and the board's memory of it) for ever. */
export const DEFAULT_HOOK_TIMEOUT_MS = 10 * 60_000;
const OUTPUT_DRAIN_MS = 500;

/**
 * Runs one hook: `/bin/sh -c COMMAND` with its payload as one JSON line on stdin, in a process group
 * of its own (a crash of the board leaves it to finish; a timeout stops whatever it started).
 * Resolves when it has exited, with its code and the end of its output; never rejects.
 */
export function runHookCommand(command: string, payload: HookPayload, options: HookCommandOptions): Promise<HookOutcome> {
  const started = options.clock.now();
  const output = new TailBuffer(HOOK_OUTPUT_TAIL_CHARS);
  const tail = () => output.text().slice(-HOOK_OUTPUT_TAIL_CHARS);
  return new Promise((resolve) => {
    let settled = false;
    let stoppedBy: string | null = null;
    const finish = (outcome: Omit<HookOutcome, 'durationMs' | 'outputTail'>) => {
      if (settled) return;
      settled = true;
      cancelTimeout();
      resolve({ ...outcome, outputTail: tail(), durationMs: Math.max(0, options.clock.now() - started) });
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('/bin/sh', ['-c', command], {
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        ...(options.cwd ? { cwd: options.cwd } : {}),
        env: { ...process.env, RUNLEDGER_HOOK: payload.hook },
      });
    } catch (error) {
      resolve({ ok: false, exitCode: null, signal: null, error: `could not start: ${messageOf(error)}`, outputTail: '', durationMs: 0 });
      return;
    }
    const cancelTimeout = options.clock.after(options.timeoutMs, () => {
      stoppedBy = `killed after ${Math.round(options.timeoutMs / 1000)} s`;
      // Its group gone already (the shell's children ended with it): the command's own process is what is left to stop.
      if (!signalGroup(child.pid!, 'SIGKILL')) child.kill('SIGKILL');
    });
    child.stdout!.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk));
    // A hook that never reads its stdin must not fail because its pipe closed (EPIPE): what it did is
    // told by its exit, which is recorded either way.
    child.stdin!.on('error', () => {
      // EPIPE: the hook did not read its stdin; its exit says what it did.
    });
    child.stdin!.end(`${JSON.stringify(payload)}\n`);
    child.on('error', (error) => finish({ ok: false, exitCode: null, signal: null, error: `could not start: ${error.message}` }));
    // Its output is read to its end (`close`), unless something it left behind holds the pipes open:
    // the hook is over when its command is. Real time: the pipes are the OS's (docs/architecture.md#real-time-waits).
    const ended = (code: number | null, signal: NodeJS.Signals | null) => finish({ ok: code === 0, exitCode: code, signal, error: stoppedBy });
    child.on('exit', (code, signal) => setTimeout(() => ended(code, signal), OUTPUT_DRAIN_MS).unref());
    child.on('close', ended);
  });
}
