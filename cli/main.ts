import { buildProgram } from './program.ts';
import { runProgram } from './runProgram.ts';

await runProgram(buildProgram(), process.argv);
