import { Command, InvalidArgumentError, Option } from 'commander';
import { type Daemon, startDaemon } from '../../actors/daemon/startDaemon.ts';
import { type HookCommands, parseHook } from '../../actors/board/chores/hooks/hookNames.ts';
import { openSqliteStore } from '../../events/store/sqlite/sqliteEventStore.ts';
import { narrate } from '../narrator.ts';
import { stdoutLines } from '../stdoutLines.ts';
import { startDemoComputer } from '../demoComputer.ts';
import { submitDemoRuns } from '../demoRuns.ts';
import { DEFAULT_DB } from '../options.ts';
import { int } from '../parse.ts';
import { MAX_TIMEOUT_S } from '../../events/boardEvents.ts';
import { SAFE_ID_PART, SAFE_ID_RULE } from '../../events/safeId.ts';

const DEMO_EXEC = `node ${new URL('../demoAgent.mjs', import.meta.url).pathname}`;

/** `runledger daemon` and `runledger server`: long-lived; the first signal drains, a second exits at once. */
export function daemonCommand(): Command {
  return new Command('daemon')
    .description('board and computer in one process on one SQLite file (or, with --server, a computer joining a board)')
    .option('--db <file>', 'the SQLite log', DEFAULT_DB)
    .option('--exec <command>', 'the agent command line (prompt on stdin)', DEMO_EXEC)
    .option('--slots <n>', 'runs at once', int('--slots', 1), 1)
    .option('--login <name=n>', 'at most N runs at once on agent login NAME (repeatable)', collectLogin, {})
    .option('--port <port>', 'the board port', int('--port', 0), 7420)
    .option('--host <host>', 'the board address', '127.0.0.1')
    .option('--heartbeat-s <s>', 'seconds between heartbeats', int('--heartbeat-s', 1), 30)
    .option('--timeout-s <s>', `budget of runs that carry none (0 = none, at most ${MAX_TIMEOUT_S})`, atMost('--timeout-s', MAX_TIMEOUT_S, int('--timeout-s', 0)), 7200)
    .option('--drain-s <s>', 'time running turns get to finish on shutdown', int('--drain-s', 0), 60)
    .option('--lease-s <s>', 'heartbeat silence after which a claimed run is reaped', int('--lease-s', 1), 90)
    .option('--tick-s <s>', 'seconds between two rounds over the sessions to close', int('--tick-s', 1), 10)
    .option('--quiet-s <s>', 'a session that publishes no turn closes after this long with nothing written to its record', int('--quiet-s', 1), 120)
    .addOption(new Option('--session-driver <driver>', 'how sessions are read and closed: exec (a run\'s process) or tmux (a pane)').choices(['exec', 'tmux']).default('exec'))
    .option('--tmux-socket <name>', 'the tmux server of the sessions (tmux -L NAME); the default server when absent')
    .option('--hook <name=command>', 'run COMMAND (JSON on stdin) for on_run_claimed, on_run_started, on_run_ended, on_session_closed or on_tick (repeatable)', collectHook, {})
    .addOption(new Option('--sync <mode>', 'full survives power loss, normal a crash').choices(['full', 'normal']).default('full'))
    .option('--server <url>', 'join this board instead of running one')
    .option('--computer <id>', 'this computer\'s id', 'local')
    .option('--token <token>', 'this computer\'s token (from `runledger computer add`)')
    .option('--log-json', 'log decisions as JSON lines (pino) instead of sentences')
    .option('--demo', 'run a second computer (demo-2) and submit a few runs, to watch them queue, park, run and complete')
    .action(async (o) => {
      await runUntilSignalled(o.logJson, o.demo, {
        db: o.db, exec: o.exec, slots: o.slots, loginCapacity: o.login, port: o.port, host: o.host, heartbeatS: o.heartbeatS, timeoutS: o.timeoutS,
        drainS: o.drainS, leaseS: o.leaseS, sync: o.sync, computer: o.computer, hooks: o.hook,
        tickS: o.tickS, quietS: o.quietS, sessionDriver: o.sessionDriver, ...(o.tmuxSocket ? { tmuxSocket: o.tmuxSocket } : {}),
        ...(o.server ? { server: o.server } : {}), ...(o.token ? { token: o.token } : {}),
      });
    });
}

export function serverCommand(): Command {
  return new Command('server')
    .description('the board alone: HTTP API and push stream')
    .option('--db <file>', 'the SQLite log', DEFAULT_DB)
    .option('--port <port>', 'the board port', int('--port', 0), 7420)
    .option('--host <host>', 'the board address', '127.0.0.1')
    .option('--lease-s <s>', 'heartbeat silence after which a claimed run is reaped', int('--lease-s', 1), 90)
    .option('--hook <name=command>', 'run COMMAND (JSON on stdin) for on_run_claimed, on_run_started, on_run_ended, on_session_closed or on_tick (repeatable)', collectHook, {})
    .addOption(new Option('--sync <mode>', 'full survives power loss, normal a crash').choices(['full', 'normal']).default('full'))
    .option('--log-json', 'log decisions as JSON lines (pino) instead of sentences')
    .action(async (o) => {
      await runUntilSignalled(o.logJson, false, { db: o.db, port: o.port, host: o.host, leaseS: o.leaseS, sync: o.sync, exec: '', boardOnly: true, hooks: o.hook });
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
  const head = await headOf(options.db);
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
    void (demoComputer?.drain(reason) ?? Promise.resolve()).then(() => started).then((daemon) => daemon.drain(reason)).then(
      () => process.exit(code),
      (error) => {
        log(`shutdown failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  // A twin connected as this computer: retrying would only take turns with it (SPEC section 7). The
  // turns this life runs are its own (claimed in its name): they finish and are reported, then exit 2.
  const started = startDaemon({ ...options, log, onConnectedElsewhere: () => shutDown(2, 'another daemon is connected as this computer') });
  const daemon = await started;
  narrate(daemon.store, head, { json: Boolean(json), out });
  let signals = 0;
  const onSignal = (signal: string) => {
    signals++;
    if (signals > 1) {
      log(`${signal} again: exiting at once`);
      // Its agents go with it: a group left behind would go on working for a run nobody will report.
      // The next start finds those runs interrupted and completes them as failed.
      daemon.computer?.runs.killAll();
      demoComputer?.computer?.runs.killAll();
      process.exit(1);
    }
    log(`${signal}: ${shuttingDown ? 'already shutting down' : 'shutting down'} (send it again to exit at once)`);
    shutDown(0, 'shutdown signal');
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  // After the handlers: a signal while the demo starts drains what runs, like any other.
  if (demo) {
    demoComputer = await startDemoComputer(daemon, options, log);
    if (signals === 0 && daemon.url) await submitDemoRuns(daemon.url, options.db, log);
  }
  await new Promise(() => {});
}

/** Where the log ended before this start: the narration tells only what happens from now on. */
async function headOf(db: string): Promise<number> {
  const store = await openSqliteStore(db);
  try {
    return await store.headSeq();
  } finally {
    await store.close();
  }
}

/** A whole-number option bounded above too (SPEC section 4, "Bounds"). */
function atMost(name: string, max: number, parse: (text: string) => number) {
  return (text: string): number => {
    const value = parse(text);
    if (value > max) throw new InvalidArgumentError(`${name} wants at most ${max}, not "${text}"`);
    return value;
  };
}

/** `--login NAME=N`, repeatable: the agent login NAME runs at most N runs at once. */
function collectLogin(text: string, previous: Record<string, number>): Record<string, number> {
  const m = text.match(new RegExp(`^(${SAFE_ID_PART})=(\\d+)$`));
  if (!m) throw new InvalidArgumentError(`--login wants NAME=N (NAME of ${SAFE_ID_RULE}, N a whole number), not "${text}"`);
  return { ...previous, [m[1]!]: Number(m[2]) };
}

/** `--hook NAME=COMMAND`, repeatable: the last command given for a hook is the one run. */
function collectHook(text: string, previous: HookCommands): HookCommands {
  try {
    const [name, command] = parseHook(text);
    return { ...previous, [name]: command };
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}
