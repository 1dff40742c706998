import { Command } from '@commander-js/extra-typings';
import { DEFAULT_TIMEOUT_S } from '../../actors/run/budget.ts';
import { BUDGET_NOTE, helpAfter, ID_RULE_HELP, type OptionsOf, withLog } from '../shared/options.ts';
import { int } from '../shared/parse.ts';

const run = () =>
  withLog(new Command('run').description('run one turn locally, exactly as the daemon would, and print the reply'), 'the SQLite log')
    .requiredOption('--lane <lane>', `the conversation it is a turn of (${ID_RULE_HELP})`)
    .option('--prompt <text>', 'the prompt (default: stdin; in a terminal, type it and end with Ctrl-D)')
    .option('--dry-run', 'write nothing: no log, no session record, no resumed session')
    .option('--exec <command>', 'the agent command line (prompt on stdin), e.g. claude or "codex exec": required, unless --demo')
    .option('--demo', 'try runledger out: the demo agent (unless --exec)')
    .option('--timeout-s <s>', 'the budget in seconds (0 = none)', int('--timeout-s', 0), DEFAULT_TIMEOUT_S)
    .addOption(BUDGET_NOTE())
    .option('--json', 'print the result as JSON, for scripts');

export type RunOptions = OptionsOf<ReturnType<typeof run>>;

/** `runledger run`; what it does is in ../actions/run.ts, loaded when it runs. */
export function runCommand() {
  return helpAfter(
    run(),
    ['runledger run --lane alice --prompt "summarise README.md" --exec claude --dry-run', 'runledger run --lane alice --prompt hello --demo'],
    'the turn failed',
  ).action(async (options, command) => (await import('../actions/run.ts')).run(options, command));
}
