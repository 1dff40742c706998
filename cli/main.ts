import { Command } from 'commander';
import { auditCommand } from './commands/audit.ts';
import { rebuildCommand } from './commands/rebuild.ts';
import { replayCommand } from './commands/replay.ts';

const program = new Command('runledger')
  .description('runs AI-agent turns for a team, and can explain every decision it ever took')
  .showHelpAfterError()
  .addCommand(replayCommand())
  .addCommand(rebuildCommand())
  .addCommand(auditCommand());

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.stderr.write(`runledger: ${(error as Error).message}\n`);
  process.exitCode = 2;
}
