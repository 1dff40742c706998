import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { checkRepositories, parseRepoOption, type Repositories, readCheckout } from '../../adapters/git/repositories.ts';
import { type HookCommands, parseHook } from '../../apps/board/chores/hooks/hookNames.ts';
import type { DrainReport } from '../../apps/computer/drainComputer.ts';
import { type Daemon, type ShutdownReport, startDaemon } from '../../apps/daemon/startDaemon.ts';
import { messageOf } from '../../events/thrown.ts';
import { isPostgresUrl, redactUrl } from '../../runtime/store/logLocation.ts';
import type { DaemonOptions, ServerOptions } from '../commands/daemon.ts';
import { agentToRun } from '../shared/agentProgram.ts';
import { startDemoComputer } from '../shared/demoComputer.ts';
import { submitDemoRuns } from '../shared/demoRuns.ts';
import { jsonLines, narrate } from '../shared/narrator.ts';
import { refuseOption } from '../shared/parse.ts';
import { stdoutLines } from '../shared/stdoutLines.ts';

/** `runledger daemon`: long-lived; the first signal drains, a second exits at once. */
export async function daemon(o: DaemonOptions, command: CommandUnknownOpts): Promise<void> {
  if (isPostgresUrl(o.db)) {
    refuseOption(
      command,
      '--db <file-or-url>',
      redactUrl(o.db),
      'runledger daemon runs a computer, whose log is a SQLite file: run the board on PostgreSQL with `runledger server --db URL` and join it with `runledger daemon --server URL`',
    );
  }
  const hooks = hookCommands(o.hook ?? [], command);
  checkRetention(o, command);
  const repos = await repositories(o.repo ?? [], command);
  if (o.worktreeIdleDays !== undefined && repos.defaultName === null)
    refuseOption(
      command,
      '--worktree-idle-days <n>',
      String(o.worktreeIdleDays),
      'it closes worktrees of the repositories given with --repo: give one',
    );
  if (o.push && repos.defaultName === null)
    refuseOption(command, '--push', 'on', "it pushes lanes' branches of the repositories given with --repo: give one");
  const token = computerToken(o, command);
  const exec = agentToRun(o, {
    workspace: join(dirname(resolve(o.db)), 'workspaces', o.computer),
    again: 'then start the daemon again',
  });
  await runUntilSignalled(o.logJson, o.demo, {
    db: o.db,
    repos,
    ...(o.push ? { push: true } : {}),
    ...(o.worktreeIdleDays !== undefined ? { worktreeIdleDays: o.worktreeIdleDays } : {}),
    ...(o.retainDays !== undefined ? { retainDays: o.retainDays } : {}),
    ...(o.deleteArchivesAfterDays !== undefined ? { deleteArchivesAfterDays: o.deleteArchivesAfterDays } : {}),
    exec,
    slots: o.slots,
    loginCapacity: o.login ?? {},
    port: o.port,
    host: o.host,
    heartbeatS: o.heartbeatS,
    timeoutS: o.timeoutS,
    drainS: o.drainS,
    killGraceS: o.killGraceS,
    leaseS: o.leaseS,
    sync: o.sync,
    computer: o.computer,
    hooks,
    tickS: o.tickS,
    quietS: o.quietS,
    sessionDriver: o.sessionDriver,
    budgetNote: o.budgetNote === 'on',
    ...(o.tmuxSocket ? { tmuxSocket: o.tmuxSocket } : {}),
    ...(o.server ? { server: o.server } : {}),
    ...token,
  });
}

/**
 * This computer's token: `--token T`, else `--token-file F`, else `RUNLEDGER_COMPUTER_TOKEN`. A token
 * typed on the command line is seen by every local user in `ps`; a file or the environment is not.
 * The environment's is read only to join a board (`--server`): a daemon running its own board
 * registers its computer with a token of its own, beside its log.
 */
function computerToken(o: DaemonOptions, command: CommandUnknownOpts): { token: string; tokenSource: string } | Record<string, never> {
  const typed = command.getOptionValueSource('token') === 'cli';
  if (o.tokenFile !== undefined) {
    if (typed) refuseOption(command, '--token-file <file>', o.tokenFile, 'give the computer token one way: --token-file or --token, not both');
    const path = resolve(o.tokenFile);
    let text: string;
    try {
      text = readFileSync(path, 'utf8').trim();
    } catch (error) {
      throw new Error(
        `--token-file ${path}: cannot read it (${messageOf(error)}): give the file \`runledger computer add ID\` printed the token into`,
      );
    }
    if (text === '') throw new Error(`--token-file ${path} is empty: put in it the token \`runledger computer add ID\` printed`);
    return { token: text, tokenSource: `the token in ${path} (--token-file)` };
  }
  if (o.token === undefined || o.token === '') return {};
  if (typed) return { token: o.token, tokenSource: 'the token given with --token' };
  return o.server ? { token: o.token, tokenSource: 'the token in RUNLEDGER_COMPUTER_TOKEN' } : {};
}

/** `runledger server`: the board alone, as long-lived as the daemon. */
export async function server(o: ServerOptions, command: CommandUnknownOpts): Promise<void> {
  const hooks = hookCommands(o.hook ?? [], command);
  checkRetention(o, command);
  await runUntilSignalled(o.logJson, false, {
    db: o.db,
    port: o.port,
    host: o.host,
    leaseS: o.leaseS,
    boardLeaseS: o.boardLeaseS,
    sync: o.sync,
    exec: '',
    boardOnly: true,
    hooks,
    ...(o.retainDays !== undefined ? { retainDays: o.retainDays } : {}),
    ...(o.deleteArchivesAfterDays !== undefined ? { deleteArchivesAfterDays: o.deleteArchivesAfterDays } : {}),
  });
}

async function runUntilSignalled(json: boolean | undefined, demo: boolean | undefined, options: Parameters<typeof startDaemon>[0]): Promise<void> {
  const out = stdoutLines();
  // The daemon's own lines share the narration's queue, so the two keep their order; they go out at once.
  const log = json
    ? (line: string) => process.stderr.write(`${JSON.stringify({ level: 30, time: Date.now(), msg: line })}\n`)
    : (line: string) => {
        out.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
        out.flush();
      };
  let demoComputer: Daemon | null = null;
  let shuttingDown = false;
  /**
   * The one way down: nothing new starts, running turns finish within --drain-s and are reported,
   * then the process exits with `code`. The demo's second computer drains first: it completes to the
   * board the daemon serves.
   */
  const shutDown = (code: number, reason: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    // `started`: a refusal can come before the daemon has finished starting; it drains once it has.
    void (demoComputer?.drain(reason) ?? Promise.resolve(null))
      .then(async (demo) => {
        const report = await (await started).drain(reason);
        // The story's last line: that it stopped, and what it left behind.
        log(stoppedLine(code, reason, options.server ?? null, demo ? [demo.computer, report.computer] : [report.computer], report.unfinished));
      })
      .then(
        () => process.exit(code),
        (error) => {
          log(`shutdown failed: ${(error as Error).message}`);
          process.exit(1);
        },
      );
  };
  // A twin connected as this computer: retrying would only take turns with it (docs/rules.md#wire-and-cli). The
  // turns this life runs are its own (claimed in its name): they finish and are reported, then exit 2.
  const started = startDaemon({
    ...options,
    log,
    onConnectedElsewhere: () => shutDown(2, 'another daemon is connected as this computer'),
    onRefused: () => shutDown(2, 'the board refused this computer'),
  });
  // Installed before the daemon has started: a signal while it starts (a restart finishing what the
  // last life left) drains once it has, rather than killing it mid-start.
  let daemon: Daemon | null = null;
  let signals = 0;
  const onSignal = (signal: string) => {
    signals++;
    if (signals > 1) {
      log(`${signal} again: exiting at once`);
      // Its agents go with it: a group left behind would go on working for a run nobody will report.
      // The next start finds those runs interrupted and completes them as failed.
      daemon?.computer?.runs.killAll();
      demoComputer?.computer?.runs.killAll();
      process.exit(1);
    }
    log(`${signal}: ${shuttingDown ? 'already shutting down' : 'shutting down'} (send it again to exit at once)`);
    shutDown(0, 'shutdown signal');
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  daemon = await started;
  narrate(daemon.store, daemon.headAtStart, { json: json ? await jsonLines(out) : null, out });
  // After the handlers: a signal while the demo starts drains what runs, like any other.
  if (demo) {
    demoComputer = await startDemoComputer(daemon, options, log);
    if (signals === 0 && daemon.url) await submitDemoRuns(daemon.url, options.db, log);
  }
  await new Promise(() => {
    // runs until a signal stops the process
  });
}

/** The daemon's last line: it stopped, why, and what its computers' turns and its board's runs became. */
function stoppedLine(
  code: number,
  reason: string,
  server: string | null,
  drained: readonly (DrainReport | null)[],
  unfinished: ShutdownReport['unfinished'],
): string {
  const parts = drained.flatMap((d) => (d === null ? [] : [`computer ${d.computer}: ${turnsLeft(d)}`]));
  if (unfinished !== null) {
    const held = Object.entries(unfinished.held).map(([computer, n]) => `${n} on ${computer}`);
    if (unfinished.queued === 0 && held.length === 0) parts.push('the board has no unfinished run');
    if (unfinished.queued > 0) parts.push(`the board keeps ${plural(unfinished.queued, 'queued run')} in the log for its next start`);
    if (held.length > 0) parts.push(`still claimed elsewhere: ${held.join(', ')} (reported to the board when it runs again)`);
  } else if (server !== null) {
    parts.push(`what was queued here goes back to the board at ${server}, which offers it to its other computers`);
  }
  return `stopped (${reason}, exit ${code}): ${parts.join('; ')}`;
}

function turnsLeft(d: DrainReport): string {
  const unrecorded =
    d.unrecorded > 0 ? `${plural(d.unrecorded, 'turn')} whose end could not be recorded (${d.why}): the next start completes them as failed` : null;
  if (d.finished + d.stopped === 0) return unrecorded ?? 'no turn was running';
  const ended = `${plural(d.finished, 'turn')} finished, ${plural(d.stopped, 'turn')} stopped at the end of the drain time (completed as failed)`;
  return unrecorded ? `${ended}; ${unrecorded}` : ended;
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

/**
 * `--repo [NAME=]PATH`, repeatable: each must be a git repository's checkout with a commit, checked
 * before anything starts, so a daemon given a wrong path refuses to start (exit 2), naming it.
 */
async function repositories(texts: readonly string[], command: CommandUnknownOpts): Promise<Repositories> {
  const given = texts.map((text) => {
    try {
      return parseRepoOption(text);
    } catch (error) {
      return refuseOption(command, '--repo <[name=]path>', text, (error as Error).message);
    }
  });
  let repos: Repositories;
  try {
    repos = await checkRepositories(given);
  } catch (error) {
    return refuseOption(command, '--repo <[name=]path>', texts.join(' '), (error as Error).message);
  }
  // A detached HEAD or uncommitted changes in a main checkout: said, not refused (new lanes start from its HEAD).
  for (const repo of repos.byName.values()) {
    const { at, warnings, fixes } = await readCheckout(repo.path);
    if (warnings.length > 0)
      process.stderr.write(
        `runledger: repository ${repo.name} (${repo.path}) is ${at}: ${warnings.join('; ')}; to change that: ${fixes.join('; ')}\n`,
      );
  }
  return repos;
}

/**
 * `--retain-days N`, `--delete-archives-after-days M` (docs/retention.md), refused before anything is
 * opened where they cannot do what they say. On PostgreSQL retention is designed, not built: a board
 * started with it would keep everything while its operator believes otherwise.
 */
function checkRetention(o: Pick<ServerOptions, 'db' | 'retainDays' | 'deleteArchivesAfterDays'>, command: CommandUnknownOpts): void {
  if (o.retainDays !== undefined && isPostgresUrl(o.db))
    refuseOption(
      command,
      '--retain-days <n>',
      String(o.retainDays),
      'Retention keeps archives of a SQLite log only: on a PostgreSQL board, start the server without --retain-days and bound the events table with PostgreSQL tools (docs/retention.md#postgresql)',
    );
  const deleteAfter = o.deleteArchivesAfterDays;
  if (deleteAfter === undefined) return;
  if (o.retainDays === undefined)
    refuseOption(
      command,
      '--delete-archives-after-days <m>',
      String(deleteAfter),
      'It deletes archives, which only --retain-days makes: give --retain-days N too',
    );
  if (deleteAfter < o.retainDays)
    refuseOption(
      command,
      '--delete-archives-after-days <m>',
      String(deleteAfter),
      `It must be at least --retain-days (${o.retainDays}): an archive is history older than that`,
    );
}

/**
 * `--hook NAME=COMMAND`, repeatable: the last command given for a hook is the one run. Checked here,
 * where the hook names' schema loads with the daemon, not at every start (../parse.ts).
 */
function hookCommands(texts: readonly string[], command: CommandUnknownOpts): HookCommands {
  const hooks: HookCommands = {};
  for (const text of texts) {
    try {
      const [name, hookCommand] = parseHook(text);
      hooks[name] = hookCommand;
    } catch (error) {
      refuseOption(command, '--hook <name=command>', text, (error as Error).message);
    }
  }
  return hooks;
}
