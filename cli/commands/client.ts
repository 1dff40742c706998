import { Command, Option, type OptionValues } from '@commander-js/extra-typings';
import { DEFAULT_SERVER, helpAfter, ID_RULE_HELP, type OptionsOf, withLog } from '../shared/options.ts';
import { int, serverUrl } from '../shared/parse.ts';

const withBoard = <Args extends unknown[], Opts extends OptionValues, Globals extends OptionValues>(command: Command<Args, Opts, Globals>) =>
  withLog(
    command
      .addOption(
        new Option('--server <url>', 'the board: its URL, scheme included').argParser(serverUrl).env('RUNLEDGER_SERVER').default(DEFAULT_SERVER),
      )
      .addOption(
        new Option(
          '--token <token>',
          'the submit token (default: the file `token` beside --db, which the board of that log made; `runledger token add` makes more)',
        ).env('RUNLEDGER_TOKEN'),
      ),
    'the log whose folder holds the submit token (a board on PostgreSQL has none: give --token)',
  ).option('--json', 'print results as JSON, for scripts');

const submit = () =>
  withBoard(new Command('submit'))
    .description('submit a run (the prompt from --prompt or stdin); prints its id')
    .requiredOption('--lane <lane>', `the conversation it is a turn of (${ID_RULE_HELP})`)
    .option('--prompt <text>', 'the prompt (default: stdin; in a terminal, type it and end with Ctrl-D)')
    .option('--agent <id>', `the agent login to run it on (${ID_RULE_HELP})`)
    .option('--timeout-s <s>', 'its budget in seconds (0 = none)', int('--timeout-s', 0))
    .option('--idempotency-key <key>', 'a retry with the same key submits nothing new');

const cancel = () =>
  withBoard(new Command('cancel'))
    .description('cancel a run: says what the board did ("stopping on c1", "withdrawn before it was claimed")')
    .argument('<run-id>', 'the run: its id, or a unique prefix of it (6 characters or more)')
    .option('--wait', 'then wait for the run to end and print its final state (exit 0 only when it ended cancelled)')
    .option('--wait-s <s>', 'how long --wait waits, in seconds', int('--wait-s', 1), 60);

const show = () =>
  withBoard(new Command('show'))
    .description('one run as the board has it')
    .argument('<run-id>', 'the run: its id, or a unique prefix of it (6 characters or more)')
    .option('--follow', 'print a line per change (its state, what its agent is doing) until it ends, then the run (exit 0 only when it succeeded)');

const status = () => withBoard(new Command('status')).description('live: queue per lane, running, parked with their notBefore, claims');

export type SubmitOptions = OptionsOf<ReturnType<typeof submit>>;
export type CancelOptions = OptionsOf<ReturnType<typeof cancel>>;
export type ShowOptions = OptionsOf<ReturnType<typeof show>>;
export type StatusOptions = OptionsOf<ReturnType<typeof status>>;

// The board's clients; what they do is in ../actions/client.ts and ../actions/status.ts, loaded when one runs.

export function submitCommand() {
  return helpAfter(submit(), [
    'runledger submit --lane alice --prompt "what broke in the last deploy?"',
    'git diff | runledger submit --lane review',
  ]).action(async (options) => (await import('../actions/client.ts')).submit(options));
}

export function cancelCommand() {
  return helpAfter(cancel(), ['runledger cancel 2397a925 --wait'], 'with --wait, the run ended otherwise than cancelled').action(
    async (runId, options) => (await import('../actions/client.ts')).cancel(runId, options),
  );
}

export function showCommand() {
  return helpAfter(
    show(),
    ['runledger show 2397a925', 'runledger show 2397a925 --follow'],
    'with --follow, the run ended otherwise than succeeded',
  ).action(async (runId, options) => (await import('../actions/client.ts')).show(runId, options));
}

/** Apart from the others: a glance at the board loads no schema (`runledger status` starts in ~2x a bare node). */
export function statusCommand() {
  return helpAfter(status(), ['runledger status', 'runledger status --server http://board.example:7420 --json']).action(async (options) =>
    (await import('../actions/status.ts')).status(options),
  );
}
