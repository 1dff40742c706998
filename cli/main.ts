import { buildProgram } from './program.ts';
import { runProgram } from './runProgram.ts';

// A reader that went away (`runledger runs | head`) ends the command quietly, as Unix tools end: what
// was left to print has nobody to read it. Not an EPIPE stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

await runProgram(buildProgram(), process.argv);
