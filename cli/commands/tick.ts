import { Command, Option } from '@commander-js/extra-typings';
import { helpAfter, ID_RULE_HELP, type OptionsOf, withDb } from '../shared/options.ts';
import { int } from '../shared/parse.ts';

const tick = () =>
  withDb(new Command('tick'))
    .description('one round over the sessions to close on a computer (as the daemon runs every --tick-s), then exit')
    .option('--computer <id>', `the computer whose sessions to close (${ID_RULE_HELP})`, 'local')
    .addOption(
      new Option('--session-driver <driver>', "how sessions are read and closed: exec (a run's process) or tmux (a pane)")
        .choices(['exec', 'tmux'])
        .default('exec'),
    )
    .option('--tmux-socket <name>', 'the tmux server of the sessions (tmux -L NAME); the default server when absent')
    .option(
      '--tick-s <s>',
      "the daemon's round interval, which sets how far apart readings may be and still count as watched",
      int('--tick-s', 1),
      10,
    )
    .option('--quiet-s <s>', 'a session that publishes no turn closes after this long with nothing written to its record', int('--quiet-s', 1), 120);

export type TickOptions = OptionsOf<ReturnType<typeof tick>>;

/** `runledger tick`; what it does is in ../actions/tick.ts, loaded when it runs. */
export function tickCommand() {
  return helpAfter(tick(), ['runledger tick --computer local --json']).action(async (options) => (await import('../actions/tick.ts')).tick(options));
}
