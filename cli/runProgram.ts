import { CommanderError, type CommandUnknownOpts } from '@commander-js/extra-typings';

const everyCommand = (command: CommandUnknownOpts): CommandUnknownOpts[] => [command, ...command.commands.flatMap(everyCommand)];

/**
 * Runs `program` on `argv` as the entry point does: its outcome is `process.exitCode`. A usage error
 * (an unknown option, a value refused) is a usage error like any other: exit 2, not commander's 1,
 * which `replay` and `rebuild` keep for what they find; commander has said what it is. Any other error
 * thrown is printed `runledger: <message>`, exit 2. `from: 'user'` takes argv without node and the script.
 */
export async function runProgram(program: CommandUnknownOpts, argv: readonly string[], from: 'node' | 'user' = 'node'): Promise<void> {
  for (const command of everyCommand(program)) command.exitOverride();
  try {
    await program.parseAsync(argv, { from });
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? 0 : 2;
    } else {
      process.stderr.write(`runledger: ${(error as Error).message}\n`);
      process.exitCode = 2;
    }
  }
}
