import { CommanderError, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { buildProgram } from './program.ts';

const program = buildProgram();

// A reader that went away (`runledger runs | head`) ends the command quietly, as Unix tools end: what
// was left to print has nobody to read it. Not an EPIPE stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

// A usage error (an unknown option, a value refused) is a usage error like any other: exit 2, not
// commander's 1, which `replay` and `rebuild` keep for what they find. Commander has said what it is.
const everyCommand = (command: CommandUnknownOpts): CommandUnknownOpts[] => [command, ...command.commands.flatMap(everyCommand)];
for (const command of everyCommand(program)) command.exitOverride();

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`runledger: ${(error as Error).message}\n`);
    process.exitCode = 2;
  }
}
