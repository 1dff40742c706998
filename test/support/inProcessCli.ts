import { buildProgram } from '../../cli/program.ts';
import { runProgram } from '../../cli/runProgram.ts';
import type { ToolRegistry } from '../../cli/shared/registry.ts';
import type { CliResult } from './processes.ts';

/** The commands that serve until stopped, or exit the process: only ever run in a process of their own. */
const SERVING = new Set(['daemon', 'server', 'subscribe']);

export interface InProcessOptions {
  /** `replay` and `rebuild` read with it (a test's fixtures), else with production's. */
  readonly registry?: ToolRegistry;
}

/** The call under way: the next starts once it ended (stdout, stderr and the exit code are this process's). */
let queue: Promise<unknown> = Promise.resolve();

/**
 * `runledger ARGS` run in this process, exactly as `cli/main.ts` dispatches it (cli/runProgram.ts): a
 * failure sets `process.exitCode`, an error thrown is printed `runledger: <message>` with exit 2.
 * stdout and stderr are captured. A fresh process per call costs a third of a second of a shared CPU
 * or more; `runledger()` of ./processes.ts spawns the real entry point where the process itself (its
 * exit status as a shell sees it, its signals, its start) is what is tested. Calls given at once run
 * one after the other: the output and exit code are this process's. No environment of the call's own: an agent a command
 * starts is forked by this process's one launcher (adapters/agent/launcher.ts), with the environment
 * of its first use.
 */
export function runInProcess(args: readonly string[], given: InProcessOptions = {}): Promise<CliResult> {
  const call = queue.then(() => runNow(args, given));
  queue = call.catch(() => undefined);
  return call;
}

async function runNow(args: readonly string[], given: InProcessOptions): Promise<CliResult> {
  if (SERVING.has(args[0]!) && !args.includes('--help'))
    throw new Error(`runInProcess does not run ${args[0]}: it serves until stopped; spawn it (test/support/processes.ts)`);
  const saved = { exitCode: process.exitCode, out: process.stdout.write, err: process.stderr.write };
  let stdout = '';
  let stderr = '';
  process.exitCode = 0;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    await runProgram(buildProgram(given.registry), args, 'user');
    return { status: Number(process.exitCode ?? 0), stdout, stderr };
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    process.exitCode = saved.exitCode;
  }
}
