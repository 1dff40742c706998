import { Command, Option, type OptionValues } from '@commander-js/extra-typings';
import { RUN_STATES } from '../../events/runStates.ts';
import { helpAfter, ID_RULE_HELP, type OptionsOf, withBoardAddress, withLog } from '../shared/options.ts';
import { int, safeId, text } from '../shared/parse.ts';
import { laneCloseCommand } from './lane.ts';

const withBoard = <Args extends unknown[], Opts extends OptionValues, Globals extends OptionValues>(command: Command<Args, Opts, Globals>) =>
  withLog(withBoardAddress(command), 'the log whose folder holds the submit token (a board on PostgreSQL has none: give --token)').option(
    '--json',
    'print results as JSON, for scripts',
  );

const submit = () =>
  withBoard(new Command('submit'))
    .description('submit a run (the prompt from --prompt or stdin); prints its id')
    .requiredOption('--lane <lane>', `the conversation it is a turn of (${ID_RULE_HELP})`)
    .option('--prompt <text>', 'the prompt (default: stdin; in a terminal, type it and end with Ctrl-D)')
    .option('--agent <id>', `the agent login to run it on (${ID_RULE_HELP})`)
    .option('--timeout-s <s>', 'its budget in seconds (0 = none)', int('--timeout-s', 0))
    .option('--idempotency-key <key>', 'a retry with the same key submits nothing new')
    .option('--repo <name>', "the repository it works in, as its computers name it (daemon --repo NAME=PATH); default: the computer's first")
    .option('--base <ref>', "where its lane's new branch starts (a branch, tag or commit of the repository); default: the repository's HEAD");

const cancel = () =>
  withBoard(new Command('cancel'))
    .description('cancel a run: says what the board did ("stopping on c1", "withdrawn before it was claimed")')
    .argument('<run-id>', 'the run: its id, or a unique prefix of it (6 characters or more)')
    .option('--wait', 'then wait for the run to end and print its final state (exit 0 only when it ended cancelled)')
    .option('--wait-s <s>', 'how long --wait waits, in seconds', int('--wait-s', 1), 60);

const show = () =>
  withBoard(new Command('show'))
    .description(
      "one run as the board has it: its state, lane, computer, times, cost, prompt, and reply or error (--json: the board's GET /v1/runs/{run_id})",
    )
    .argument('<run-id>', 'the run: its id, or a unique prefix of it (6 characters or more)')
    .option(
      '--follow',
      'print a line per change (its state, what its agent is doing) until it ends, then how it ended and its reply (exit 0 only when it succeeded)',
    )
    .option(
      '--diff',
      "print the diff its turn left in its lane's worktree (from the board when it holds its computer's events, else the log at --db), its summary on stderr",
    );

const runs = () =>
  withBoard(new Command('runs'))
    .description('the runs on the board, newest first, live and finished alike: id, lane, state, computer, finished, took, cost, prompt')
    .option('--lane <lane>', `only the runs of this lane (${ID_RULE_HELP})`, safeId('--lane'))
    .addOption(new Option('--state <state>', 'only the runs in this state').choices(RUN_STATES))
    .option('--computer <id>', `only the runs this computer claimed (${ID_RULE_HELP})`, safeId('--computer'))
    .option(
      '--text <words>',
      'only the runs whose prompt, reply or error contains these words, in any case (at most 200 characters)',
      text('--text', 200),
    )
    .option('--limit <n>', 'how many runs to show at most', int('--limit', 1), 20);

const lane = () =>
  withBoard(new Command('lane'))
    .description(
      "a lane's conversation as a transcript, oldest turn first: each prompt, then its reply or error, with its state, computer, time and cost",
    )
    .argument('<lane>', `the lane (${ID_RULE_HELP})`, safeId('lane'))
    .option('--last <n>', 'only its last N turns', int('--last', 1));

const status = () => withBoard(new Command('status')).description('live: queue per lane, running, parked with their notBefore, claims');

export type SubmitOptions = OptionsOf<ReturnType<typeof submit>>;
export type CancelOptions = OptionsOf<ReturnType<typeof cancel>>;
export type ShowOptions = OptionsOf<ReturnType<typeof show>>;
export type RunsOptions = OptionsOf<ReturnType<typeof runs>>;
export type LaneOptions = OptionsOf<ReturnType<typeof lane>>;
export type StatusOptions = OptionsOf<ReturnType<typeof status>>;

// The board's clients; what they do is in ../actions/submit.ts, client.ts and status.ts, loaded when one runs.

export function submitCommand() {
  return helpAfter(submit(), [
    'runledger submit --lane alice --prompt "what broke in the last deploy?"',
    'git diff | runledger submit --lane review',
  ]).action(async (options) => (await import('../actions/submit.ts')).submit(options));
}

export function cancelCommand() {
  return helpAfter(cancel(), ['runledger cancel 2397a925 --wait'], 'with --wait, the run ended otherwise than cancelled').action(
    async (runId, options) => (await import('../actions/client.ts')).cancel(runId, options),
  );
}

export function showCommand() {
  return helpAfter(
    show(),
    ['runledger show 2397a925', 'runledger show 2397a925 --follow', 'runledger show 2397a925 --diff | less'],
    'with --follow, the run ended otherwise than succeeded',
  ).action(async (runId, options) => (await import('../actions/client.ts')).show(runId, options));
}

export function runsCommand() {
  return helpAfter(runs(), [
    'runledger runs',
    'runledger runs --lane alice --state failed --limit 5',
    'runledger runs --text "last deploy"',
    'runledger runs --computer c1 --json',
  ]).action(async (options) => (await import('../actions/runs.ts')).runs(options));
}

export function laneCommand() {
  return helpAfter(
    lane(),
    ['runledger lane alice', 'runledger lane alice --last 3 --json', 'runledger lane close alice'],
    'the board has no run of that lane',
  )
    .enablePositionalOptions()
    .addCommand(laneCloseCommand())
    .action(async (laneId, options) => (await import('../actions/runs.ts')).lane(laneId, options));
}

/** Apart from the others: a glance at the board loads no schema (`runledger status` starts in ~2x a bare node). */
export function statusCommand() {
  return helpAfter(status(), ['runledger status', 'runledger status --server http://board.example:7420 --json']).action(async (options) =>
    (await import('../actions/status.ts')).status(options),
  );
}
