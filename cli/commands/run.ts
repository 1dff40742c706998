import { Command } from '@commander-js/extra-typings';
import { DEFAULT_TIMEOUT_S } from '../../actors/run/budget.ts';
import { DEFAULT_DB, DEMO_EXEC, type OptionsOf } from '../shared/options.ts';
import { int } from '../shared/parse.ts';

const run = () =>
  new Command('run')
    .description('run one turn locally, exactly as the daemon would, and print the reply')
    .requiredOption('--lane <lane>', 'the conversation it is a turn of')
    .option('--prompt <text>', 'the prompt (default: stdin)')
    .option('--dry-run', 'write nothing: no log, no session record, no resumed session')
    .option('--exec <command>', 'the agent command line (prompt on stdin)', DEMO_EXEC)
    .option('--timeout-s <s>', 'the budget in seconds (0 = none)', int('--timeout-s', 0), DEFAULT_TIMEOUT_S)
    .option('--db <file>', 'the SQLite log', DEFAULT_DB)
    .option('--json', 'print the result as JSON, for scripts');

export type RunOptions = OptionsOf<ReturnType<typeof run>>;

/** `runledger run`; what it does is in ../actions/run.ts, loaded when it runs. */
export function runCommand() {
  return run().action(async (options, command) => (await import('../actions/run.ts')).run(options, command));
}
