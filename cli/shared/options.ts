import { type Command, type CommandUnknownOpts, Option, type OptionValues } from '@commander-js/extra-typings';
import { SAFE_ID_RULE } from '../../events/idRule.ts';
import { chooseLog, HOME_ORDER } from './home.ts';
import { serverUrl } from './parse.ts';

/**
 * What the command definitions share. Every start loads the definitions (`--help` lists them all), so
 * this file and they import nothing heavy: no store, no schemas; an action loads those with its command.
 */

export const DEFAULT_SERVER = 'http://127.0.0.1:7420';
/** The daemon's default agent, so `run` and `daemon` run the same thing unless told otherwise. */
export const DEMO_EXEC = `node ${new URL('./demoAgent.mjs', import.meta.url).pathname}`;

export interface DbOptions {
  db: string;
  /** How `db` was chosen ("given with --db", "from RUNLEDGER_HOME=...", ...), set with it (withLog), for the messages that name the log. */
  dbHow?: string;
  json?: boolean;
  sync?: 'full' | 'normal';
}

/** Said in the help of every option or argument that takes an id (a lane, a computer, a session...). */
export const ID_RULE_HELP = `letters, digits and -, 1 to 64 of them: ${SAFE_ID_RULE}`;

/** The exit codes every command keeps, for the help (`runledger --help`). */
export const EXIT_CODES =
  'Exit codes: 0 ok; 1 a finding (replay or rebuild found a difference, audit found no such run, a turn or a waited-for run failed); ' +
  '2 a usage or environment error (a bad option, no board answering, a token refused, a port taken, a log that cannot be opened): ' +
  'the message names the thing and what to do.';

/**
 * A command's help ends with an example (or a few) and what its exit codes mean for it (`finding`:
 * what exit 1 means; none when the command has no finding to report).
 */
export function helpAfter<C extends { addHelpText(position: 'after', text: string): unknown }>(
  command: C,
  examples: readonly string[],
  finding?: string,
): C {
  const exits = `Exit: 0 ok${finding ? `; 1 ${finding}` : ''}; 2 a usage or environment error, named with what to do.`;
  command.addHelpText('after', `\nExample${examples.length > 1 ? 's' : ''}:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n\n${exits}`);
  return command;
}

/** `--budget-note on|off` (`daemon`, `run`): the sentence about the time budget ahead of each prompt, or the prompt as given. */
export const BUDGET_NOTE = () =>
  new Option(
    '--budget-note <mode>',
    'on: the agent gets a sentence about its time budget ("You have about 2 hours for this turn...") ahead of the prompt; off: the prompt as given',
  )
    .choices(['on', 'off'] as const)
    .default('on' as const);

/** The option values of a command definition, as its action receives them (typed from its `.option`s). */
export type OptionsOf<C extends { opts(): OptionValues }> = ReturnType<C['opts']>;

/**
 * `--db`: the log, a SQLite file or a `postgres://` URL, for `command`; when it is not given, the one
 * home every command finds from any folder (./home.ts), resolved once before the action runs: the
 * action gets the log's location in `db` and how it was chosen in `dbHow`.
 */
export function withLog<Args extends unknown[], Opts extends OptionValues, Globals extends OptionValues>(
  command: Command<Args, Opts, Globals>,
  what = 'the log: a SQLite file, or a postgres:// URL (a board on PostgreSQL)',
) {
  // The default's value is never used: the hook below sets the chosen log in its place.
  return command.addOption(new Option('--db <file-or-url>', what).default('', HOME_ORDER)).hook('preAction', chooseLogOf);
}

function chooseLogOf(command: CommandUnknownOpts): void {
  const given = command.getOptionValueSource('db') === 'cli' ? (command.getOptionValue('db') as string) : undefined;
  const choice = chooseLog(given, process.env, process.cwd());
  command.setOptionValueWithSource('db', choice.db, given === undefined ? 'default' : 'cli');
  command.setOptionValue('dbHow', choice.how);
  if (choice.note !== null) process.stderr.write(`runledger: ${choice.note}\n`);
}

/** How a command's log was chosen, for a message naming it ("given with --db", "from RUNLEDGER_HOME=..."). */
export function howChosen(options: { db: string; dbHow?: string }): string {
  return options.dbHow ?? 'given with --db';
}

/** `--server` and `--token` (or RUNLEDGER_SERVER and RUNLEDGER_TOKEN): the board a command talks to. */
export function withBoardAddress<Args extends unknown[], Opts extends OptionValues, Globals extends OptionValues>(
  command: Command<Args, Opts, Globals>,
) {
  return command
    .addOption(
      new Option('--server <url>', 'the board: its URL, scheme included').argParser(serverUrl).env('RUNLEDGER_SERVER').default(DEFAULT_SERVER),
    )
    .addOption(
      new Option(
        '--token <token>',
        'the submit token (default: the file `token` beside --db, which the board of that log made; `runledger token add` makes more)',
      ).env('RUNLEDGER_TOKEN'),
    );
}

export function withDb<Args extends unknown[], Opts extends OptionValues, Globals extends OptionValues>(command: Command<Args, Opts, Globals>) {
  return withLog(command).option('--json', 'print results as JSON, for scripts');
}

/** Prints `value` as JSON or through `human`, whichever the user asked for. */
export function print(options: { json?: boolean }, value: unknown, human: () => string): void {
  process.stdout.write(`${options.json ? JSON.stringify(value) : human()}\n`);
}
