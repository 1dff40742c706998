import { Command } from '@commander-js/extra-typings';
import packageJson from '../package.json' with { type: 'json' };
import { adoptCommand } from './commands/adopt.ts';
import { auditCommand } from './commands/audit.ts';
import { backupCommand } from './commands/backup.ts';
import { cancelCommand, laneCommand, runsCommand, showCommand, statusCommand, submitCommand } from './commands/client.ts';
import { computerCommand } from './commands/computer.ts';
import { daemonCommand, serverCommand } from './commands/daemon.ts';
import { doctorCommand } from './commands/doctor.ts';
import { rebuildCommand } from './commands/rebuild.ts';
import { replayCommand } from './commands/replay.ts';
import { runCommand } from './commands/run.ts';
import { serviceCommand } from './commands/service.ts';
import { subscribeCommand, unsubscribeCommand } from './commands/subscribe.ts';
import { tickCommand } from './commands/tick.ts';
import { tokenCommand } from './commands/token.ts';
import { EXIT_CODES } from './shared/options.ts';
import type { ToolRegistry } from './shared/registry.ts';

// Every start loads this file and the definitions in commands/, nothing more: each command's action
// imports what it does (../actions/) when it runs, so `--help` and `--version` load commander alone.
/**
 * The whole command line, defined and not run: main.ts parses argv with it, scripts/docs.ts prints its
 * reference. `replay` and `rebuild` read with `registry` when one is given (a test's fixtures), else production's.
 */
export function buildProgram(registry?: ToolRegistry) {
  return (
    new Command('runledger')
      .description('runs AI-agent turns for a team, and can explain every decision it ever took')
      .version(packageJson.version, '-V, --version', 'print the version of runledger')
      .showHelpAfterError()
      // A command's options are its own wherever they stand (`lane close LANE --db F` is close's --db, not lane's).
      .enablePositionalOptions()
      .addCommand(daemonCommand())
      .addCommand(serverCommand())
      .addCommand(computerCommand())
      .addCommand(tokenCommand())
      .addCommand(runCommand())
      .addCommand(doctorCommand())
      .addCommand(submitCommand())
      .addCommand(cancelCommand())
      .addCommand(statusCommand())
      .addCommand(showCommand())
      .addCommand(runsCommand())
      .addCommand(laneCommand())
      .addCommand(auditCommand())
      .addCommand(replayCommand(registry))
      .addCommand(rebuildCommand(registry))
      .addCommand(backupCommand())
      .addCommand(tickCommand())
      .addCommand(adoptCommand())
      .addCommand(subscribeCommand())
      .addCommand(unsubscribeCommand())
      .addCommand(serviceCommand())
      .addHelpText('after', `\nExample:\n  $ runledger daemon --demo\n  $ runledger submit --lane alice --prompt "and then?"\n\n${EXIT_CODES}`)
  );
}
