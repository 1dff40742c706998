import { Command, InvalidArgumentError, Option } from '@commander-js/extra-typings';
import { MAX_TIMEOUT_S } from '../../events/bounds.ts';
import { SAFE_ID_PART, SAFE_ID_RULE } from '../../events/idRule.ts';
import { BUDGET_NOTE, helpAfter, ID_RULE_HELP, type OptionsOf, withLog } from '../shared/options.ts';
import { atMost, collect, int, serverUrls } from '../shared/parse.ts';

const HOOK = 'run COMMAND (JSON on stdin) for on_run_claimed, on_run_started, on_run_ended, on_session_closed or on_tick (repeatable)';

/** Retention, the same for the daemon and the server: docs/retention.md. */
const RETAIN_DAYS = () =>
  new Option(
    '--retain-days <n>',
    'move the history of runs and sessions that ended more than N days ago to archive/ beside the log (every tool still reads it); default: keep all live',
  ).argParser(positiveNumber('--retain-days'));
const DELETE_ARCHIVES_AFTER_DAYS = () =>
  new Option('--delete-archives-after-days <m>', 'delete archived history older than M days (recorded in the log); default: never').argParser(
    positiveNumber('--delete-archives-after-days'),
  );

const daemon = () =>
  withLog(
    new Command('daemon').description('board and computer in one process on one SQLite file (or, with --server, a computer joining a board)'),
    'the SQLite log (a computer keeps its log in a file; a board on PostgreSQL is `runledger server`)',
  )
    .option('--exec <command>', 'the agent command line (prompt on stdin), e.g. claude or "codex exec": required, unless --demo')
    .option('--slots <n>', 'runs at once', int('--slots', 1), 1)
    .option('--login <name=n>', 'at most N runs at once on agent login NAME (repeatable)', collectLogin)
    .option('--port <port>', 'the board port (0: one the system picks)', int('--port', 0), 7420)
    .option('--host <host>', 'the board address', '127.0.0.1')
    .option('--heartbeat-s <s>', 'seconds between heartbeats', int('--heartbeat-s', 1), 30)
    .option(
      '--timeout-s <s>',
      `budget of runs that carry none (0 = none, at most ${MAX_TIMEOUT_S})`,
      atMost('--timeout-s', MAX_TIMEOUT_S, int('--timeout-s', 0)),
      7200,
    )
    .addOption(BUDGET_NOTE())
    .option('--drain-s <s>', 'time running turns get to finish on shutdown', int('--drain-s', 0), 60)
    .option(
      '--kill-grace-s <s>',
      'time an agent told to stop (SIGTERM: its budget spent, its run cancelled, its turn over with processes left, its session closed) gets to exit before SIGKILL',
      int('--kill-grace-s', 0),
      5,
    )
    .option('--lease-s <s>', 'heartbeat silence after which a claimed run is reaped', int('--lease-s', 1), 90)
    .option('--tick-s <s>', 'seconds between two rounds over the sessions to close', int('--tick-s', 1), 10)
    .option('--quiet-s <s>', 'a session that publishes no turn closes after this long with nothing written to its record', int('--quiet-s', 1), 120)
    .addOption(
      new Option('--session-driver <driver>', "how sessions are read and closed: exec (a run's process) or tmux (a pane)")
        .choices(['exec', 'tmux'])
        .default('exec'),
    )
    .option('--tmux-socket <name>', 'the tmux server of the sessions (tmux -L NAME); the default server when absent')
    .option('--hook <name=command>', HOOK, collect)
    .addOption(new Option('--sync <mode>', 'full survives power loss, normal a crash').choices(['full', 'normal']).default('full'))
    .option(
      '--server <url>',
      'join this board instead of running one: its URL, scheme included (http://host:port); or URL1,URL2,… for boards on one PostgreSQL log, tried in turn',
      serverUrls,
    )
    .option('--computer <id>', `this computer's id (${ID_RULE_HELP})`, 'local')
    .addOption(
      new Option(
        '--token <token>',
        "this computer's token, with --server (`runledger computer add ID` on the board prints it); seen by every local user in `ps`: prefer --token-file or RUNLEDGER_COMPUTER_TOKEN",
      ).env('RUNLEDGER_COMPUTER_TOKEN'),
    )
    .option('--token-file <file>', "with --server: the file holding this computer's token (mode 0600), read at start")
    .option(
      '--repo <[name=]path>',
      "a git repository the lanes work in, each lane in a worktree of its own on branch runledger/LANE (repeatable; NAME defaults to the folder's name; the first, or the one named default, serves runs that name none)",
      collect,
    )
    .option(
      '--worktree-idle-days <n>',
      'close the worktree of a lane idle for N days (uncommitted changes committed to its branch first; the branch kept)',
      positiveNumber('--worktree-idle-days'),
    )
    .option(
      '--push',
      "push a lane's branch to the repository's origin after each turn that changed it, and start a lane new to this computer from origin's branch",
    )
    .addOption(RETAIN_DAYS())
    .addOption(DELETE_ARCHIVES_AFTER_DAYS())
    .option('--log-json', 'log decisions as JSON lines (pino) instead of sentences')
    .option(
      '--demo',
      'try runledger out: the demo agent (unless --exec), a second computer (demo-2) and a few runs, to watch them queue, spread over both computers, wait for their lane, run and complete',
    );

const server = () =>
  withLog(new Command('server').description('the board alone: HTTP API and push stream (several of them on one PostgreSQL database)'))
    .option('--port <port>', 'the board port (0: one the system picks)', int('--port', 0), 7420)
    .option('--host <host>', 'the board address', '127.0.0.1')
    .option('--lease-s <s>', 'heartbeat silence after which a claimed run is reaped', int('--lease-s', 1), 90)
    .option(
      '--board-lease-s <s>',
      'on PostgreSQL: silence after which another board takes a board’s chores and computers',
      int('--board-lease-s', 1),
      10,
    )
    .option('--hook <name=command>', HOOK, collect)
    .addOption(new Option('--sync <mode>', 'full survives power loss, normal a crash').choices(['full', 'normal']).default('full'))
    .addOption(RETAIN_DAYS())
    .addOption(DELETE_ARCHIVES_AFTER_DAYS())
    .option('--log-json', 'log decisions as JSON lines (pino) instead of sentences');

export type DaemonOptions = OptionsOf<ReturnType<typeof daemon>>;

/** The daemon's options without its action: `service print` checks the arguments it puts in a unit with them, and reads their defaults. */
export const daemonDefinition = daemon;
export type ServerOptions = OptionsOf<ReturnType<typeof server>>;

/** `runledger daemon` and `runledger server`; what they do is in ../actions/daemon.ts, loaded when one runs. */
export function daemonCommand() {
  return helpAfter(daemon(), [
    'runledger daemon --demo',
    'runledger daemon --exec "claude -p --output-format stream-json --verbose" --slots 2',
    'runledger daemon --server http://board.example:7420 --computer c2 --token-file ~/.config/runledger/c2.token --exec claude',
  ]).action(async (options, command) => (await import('../actions/daemon.ts')).daemon(options, command));
}

export function serverCommand() {
  return helpAfter(server(), [
    'runledger server --port 7420 --db /var/lib/runledger/runledger.db',
    'runledger server --host 0.0.0.0 --db postgres://runledger@db.example/runledger',
  ]).action(async (options, command) => (await import('../actions/daemon.ts')).server(options, command));
}

/** A number of days above 0, fractions allowed (`0.5`: twelve hours). */
function positiveNumber(name: string) {
  return (text: string): number => {
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) throw new InvalidArgumentError(`${name} wants a number of days above 0, not "${text}"`);
    return value;
  };
}

const LOGIN = new RegExp(`^(${SAFE_ID_PART})=(\\d+)$`);

/** `--login NAME=N`, repeatable: the agent login NAME runs at most N runs at once. */
function collectLogin(text: string, previous: Record<string, number> = {}): Record<string, number> {
  const m = text.match(LOGIN);
  if (!m) throw new InvalidArgumentError(`--login wants NAME=N (NAME of ${SAFE_ID_RULE}, N a whole number), not "${text}"`);
  return { ...previous, [m[1]!]: Number(m[2]) };
}
