import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { auditCommand } from '../../cli/commands/audit.ts';
import { computerCommand } from '../../cli/commands/computer.ts';
import { rebuildCommand } from '../../cli/commands/rebuild.ts';
import { replayCommand } from '../../cli/commands/replay.ts';
import { tokenCommand } from '../../cli/commands/token.ts';
import type { ToolRegistry } from '../../cli/shared/registry.ts';
import { messageOf } from '../../events/thrown.ts';
import type { CliResult } from './processes.ts';

/**
 * The commands that only read a log (and `rebuild --write`), and the set-up ones that add a computer or
 * a submit token to it (the board running on it takes them as from the spawned command), which a test
 * may run in its own process.
 */
const COMMANDS: Record<string, (registry?: ToolRegistry) => CommandUnknownOpts> = {
  audit: () => auditCommand(),
  replay: replayCommand,
  rebuild: rebuildCommand,
  computer: () => computerCommand(),
  token: () => tokenCommand(),
};

/**
 * `runledger ARGS` run in this process, exactly as `cli/main.ts` dispatches it: a failure sets
 * `process.exitCode`, an error thrown is printed `runledger: <message>` with exit 2. stdout and stderr
 * are captured. A fresh process per call costs over a second of a shared CPU; `runledger()` of
 * ./processes.ts spawns the real entry point where the exit status itself is what is tested. `replay`
 * and `rebuild` read with `registry` when one is given (a test's fixtures), else production's.
 */
export function runInProcess(args: readonly string[], registry?: ToolRegistry): Promise<CliResult> {
  // One at a time: each takes this process's stdout, stderr and exit code while it runs.
  const run = queue.then(() => runNow(args, registry));
  queue = run.catch(() => undefined);
  return run;
}

let queue: Promise<unknown> = Promise.resolve();

async function runNow(args: readonly string[], registry?: ToolRegistry): Promise<CliResult> {
  const [name, ...rest] = args;
  const make = COMMANDS[name!];
  if (!make) throw new Error(`runInProcess runs ${Object.keys(COMMANDS).join(', ')}, not ${name}`);
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
    const command = make(registry);
    for (const each of [command, ...command.commands]) each.exitOverride();
    await command.parseAsync(rest, { from: 'user' });
    return { status: Number(process.exitCode ?? 0), stdout, stderr };
  } catch (error) {
    return { status: 2, stdout, stderr: `${stderr}runledger: ${messageOf(error)}\n` };
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    process.exitCode = saved.exitCode;
  }
}
