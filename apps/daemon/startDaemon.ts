import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { tokenHashOf } from '../../actors/board/boardQueries.ts';
import { type BoardState, isTerminal } from '../../actors/board/boardState.ts';
import type { Repositories } from '../../adapters/git/repositories.ts';
import { BoardClient } from '../../adapters/http/boardClient.ts';
import { BoardServers } from '../../adapters/http/boardServers.ts';
import { hashToken, secretFile, tokenPaths } from '../../adapters/http/tokens.ts';
import { describeForeignRow, type ForeignRow } from '../../events/codec.ts';
import { statusView } from '../../projections/statusView.ts';
import type { UsageState } from '../../projections/usage.ts';
import { type Clock, systemClock } from '../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import { ProjectionKeeper } from '../../runtime/folds/keeper/projectionKeeper.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { isPostgresUrl, redactUrl } from '../../runtime/store/logLocation.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import { openStore } from '../../runtime/store/open/openStore.ts';
import type { StoreFaults } from '../../runtime/store/sqlite/appendBatch.ts';
import { openSqliteStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { webView } from '../../web/webView.ts';
import { type BoardServer, startBoardServer } from '../board/boardServer.ts';
import { driverLiveness, type RunningChores, startBoardChores } from '../board/chores/boardChores.ts';
import type { HookCommands } from '../board/chores/hooks/hookNames.ts';
import { choresOn } from '../board/peers/leasedStore.ts';
import { PostgresPeers } from '../board/peers/postgresPeers.ts';
import { BoardReport } from '../computer/boardReport.ts';
import { type DriverName, SessionCloser } from '../computer/closer/sessionCloser.ts';
import { Computer } from '../computer/computer.ts';
import { type DrainReport, drainComputer } from '../computer/drainComputer.ts';
import { boardLockPath, computerLockPath, takeProcessLock } from '../computer/processLock.ts';
import { startRetention } from './retentionChore.ts';

export interface DaemonOptions {
  readonly db: string;
  readonly sync?: 'full' | 'normal';
  readonly host?: string;
  readonly port?: number;
  readonly exec: string;
  readonly slots?: number;
  /** Runs at once per agent login (`--login NAME=N`); a login not named has no limit. */
  readonly loginCapacity?: Record<string, number>;
  readonly heartbeatS?: number;
  readonly timeoutS?: number;
  readonly drainS?: number;
  /** What an agent told to stop (SIGTERM) gets before SIGKILL (`--kill-grace-s`, default 5): a turn's, a session's. */
  readonly killGraceS?: number;
  readonly leaseS?: number;
  /** On PostgreSQL: how long a silent board keeps its chores and computers before another board takes them (BOARD_LEASE_MS). */
  readonly boardLeaseS?: number;
  /** The board's hooks (`--hook NAME=COMMAND`): run once each, after the commit that decided them. */
  readonly hooks?: HookCommands;
  /** Session close (docs/rules.md#sessions-hooks-notifications): a round every `tickS` (default 10), `quietS` (default 120), the driver (default exec). */
  readonly tickS?: number;
  readonly quietS?: number;
  readonly sessionDriver?: DriverName;
  readonly tmuxSocket?: string;
  /** Join a remote board instead of running one. */
  readonly server?: string;
  readonly computer?: string;
  readonly token?: string;
  /** Where `token` came from, for the message of a refusal ("the token in /etc/runledger/c2.token (--token-file)"). */
  readonly tokenSource?: string;
  /**
   * With `server`: whether this computer sends the board a copy of its runs', lanes' and sessions'
   * events (BoardReport). On by default, as a joining computer's log is its own; off for a computer
   * that writes the board's own log file (the demo's second), whose board reads them there.
   */
  readonly reportToBoard?: boolean;
  /** Run the board only (`runledger server`). */
  readonly boardOnly?: boolean;
  readonly clock?: Clock;
  readonly log?: (line: string) => void;
  /** Another daemon holds this computer's stream on the board (close code 4409): the caller stops this one. */
  readonly onConnectedElsewhere?: (message: string) => void;
  /** The board refused this computer's push stream (a wrong token): the caller stops this one. */
  readonly onRefused?: (message: string) => void;
  /** The budget sentence ahead of each prompt (`--budget-note`); on by default. */
  readonly budgetNote?: boolean;
  /** The repositories the computer's lanes work in (`--repo`, checked by the caller); none: plain folders. */
  readonly repos?: Repositories;
  /** `--push`: lanes' branches pushed to `origin` after each turn that changed them. */
  readonly push?: boolean;
  /** `--worktree-idle-days`: worktrees of lanes idle this many days are closed (fractions allowed; none: kept). */
  readonly worktreeIdleDays?: number;
  /** `--retain-days`, `--delete-archives-after-days` (docs/retention.md); none: the log keeps everything. */
  readonly retainDays?: number;
  readonly deleteArchivesAfterDays?: number;
  /** Only for tests: failures injected into the log's commits (a full disk). */
  readonly storeFaults?: StoreFaults;
}

/** What a drained daemon left: its computer's turns, and the runs its board holds that are not finished. */
export interface ShutdownReport {
  readonly computer: DrainReport | null;
  /**
   * Runs the board of this process has not finished (null without a board), kept in the log for its
   * next start: those no computer holds, and per computer those claimed and not yet reported.
   */
  readonly unfinished: { readonly queued: number; readonly held: Readonly<Record<string, number>> } | null;
}

export interface Daemon {
  readonly store: EventStore;
  /** The board's URL, when this process runs one. */
  readonly url: string | null;
  readonly computerId: string | null;
  readonly board: BoardServer | null;
  readonly computer: Computer | null;
  /** Starts nothing new, lets executing runs finish (then kills them), waits for every completion. `reason`: why, for the log. */
  drain(reason?: string): Promise<ShutdownReport>;
  /** Stops at once, leaving the log as it is: what was in flight is finished by the next start. */
  close(): Promise<void>;
}

/**
 * `runledger daemon` (board and computer in one process, the computer talking to its board over
 * loopback like any other), `--server` (a computer joining a remote board) and `runledger server`.
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const clock = options.clock ?? systemClock;
  const log =
    options.log ??
    (() => {
      // no log given (tests, an embedding): nothing is narrated
    });
  // A board on PostgreSQL (docs/rules.md#postgresql-board) is `runledger server`: a computer keeps its log in a file of its own.
  const onPostgres = isPostgresUrl(options.db);
  if (onPostgres && !options.boardOnly) {
    throw new Error(
      `--db ${redactUrl(options.db)}: runledger daemon runs a computer, whose log is a SQLite file; run the board on PostgreSQL with \`runledger server --db URL\`, and join it with \`runledger daemon --server URL --db FILE\``,
    );
  }
  const db = onPostgres ? options.db : resolve(options.db);
  const named = onPostgres ? redactUrl(db) : db;
  // Files beside the log (a SQLite board's tokens, the hooks' folder); on PostgreSQL, where it was started.
  const folder = onPostgres ? process.cwd() : dirname(db);
  const storeOptions = {
    ...(options.sync ? { sync: options.sync } : {}),
    ...(options.log ? { report: options.log } : {}),
    // A row this version cannot read (a newer one wrote it) is skipped by every fold and named here once.
    foreignRows: (row: ForeignRow) => log(`log ${named}: ${describeForeignRow(row)}: skipped`),
  };
  const store = onPostgres
    ? await openStore(db, storeOptions)
    : await openSqliteStore(db, { ...storeOptions, ...(options.storeFaults ? { faults: options.storeFaults } : {}) });
  const system = startActorSystem({
    clock,
    // An outage of the log (a full disk, a lock, a server down) is told once by the store, and each
    // actor it stops folds again at its next message: not once more per actor and per message.
    onError: (r) => {
      if (r.error instanceof LogUnwritableError) return;
      log(`actor ${r.actor}: ${r.phase} failed (${r.decision}): ${(r.error as Error)?.message ?? r.error}`);
    },
  });
  const releases: (() => void)[] = [];
  const keeper = new ProjectionKeeper(store, projections, clock, { log });
  let stopRetention: (() => Promise<void>) | null = null;
  let board: BoardServer | null = null;
  let computer: Computer | null = null;
  let sessions: SessionCloser | null = null;
  let chores: RunningChores | null = null;
  let report: BoardReport | null = null;
  let reportClient: BoardClient | null = null;
  try {
    let server = options.server ?? null;
    let token = options.token ?? null;
    let tokenSource = options.tokenSource ?? 'the token given with --token';
    const computerId = options.boardOnly ? null : (options.computer ?? 'local');
    await keeper.start();
    if (options.retainDays !== undefined) {
      const settings = {
        retainDays: options.retainDays,
        ...(options.deleteArchivesAfterDays !== undefined ? { deleteAfterDays: options.deleteArchivesAfterDays } : {}),
      };
      stopRetention = await startRetention(store, db, settings, clock, log);
    }
    if (server === null) {
      // Boards on one PostgreSQL database are many by design (docs/rules.md#postgresql-board); on one SQLite file, one.
      const { sharedLog } = store;
      if (sharedLog === null) releases.push(takeProcessLock(boardLockPath(db), `a board on ${db}`));
      // Several boards share the chores (one holds their lease) and the runs' heartbeats; one alone has nobody to share with.
      const peers = sharedLog
        ? new PostgresPeers(sharedLog, { clock, log, ...(options.boardLeaseS !== undefined ? { leaseMs: options.boardLeaseS * 1000 } : {}) })
        : null;
      const secrets = sharedLog
        ? { submitToken: null, boardSecret: await sharedLog.boardSecret() }
        : { submitToken: secretFile(tokenPaths(db).submitToken), boardSecret: secretFile(tokenPaths(db).boardSecret) };
      // The computers' reported events, in tables of their own beside the log.
      const reported = store.reportedEvents({ foreignRows: storeOptions.foreignRows });
      board = await startBoardServer({
        system,
        store,
        ...(reported ? { reported } : {}),
        clock,
        host: options.host ?? '127.0.0.1',
        port: options.port ?? 7420,
        ...secrets,
        ...(options.leaseS !== undefined ? { leaseMs: options.leaseS * 1000 } : {}),
        ...(peers ? { peers } : {}),
        status: () => statusView(keeper.state('board'), keeper.state('queue'), clock.now(), keeper.state('usage')),
        usage: () => keeper.state<UsageState>('usage').logins,
        // Boards sharing a PostgreSQL log read what computers reported to the others too.
        web: webView({ store, clock, projections: keeper, log, reported, ...(sharedLog ? { reportedPollMs: 1_000 } : {}) }),
        log,
      }).catch((error: unknown) => {
        throw portTaken(error, options.host ?? '127.0.0.1', options.port ?? 7420);
      });
      server = board.url;
      log(`board listening on ${board.url} (log ${named}); the live view: ${board.url}/`);
      // Adoptions, notices, the tick and the hooks, every round; liveness is read through this daemon's own session driver.
      chores = await startBoardChores(
        {
          ...choresOn(store, peers),
          clock,
          hooks: options.hooks ?? {},
          liveness: driverLiveness(() => sessions?.driver ?? null),
          hookCwd: folder,
          log,
        },
        (options.tickS ?? 10) * 1000,
      );
      if (computerId !== null && token === null) {
        token = await localComputerToken(board, folder, computerId, clock);
        tokenSource = `the token in ${localTokenPath(folder, computerId)}`;
      }
    }
    if (computerId !== null) {
      if (token === null)
        throw new Error(
          '--server needs --computer ID and its token: --token-file FILE or RUNLEDGER_COMPUTER_TOKEN (kept out of `ps`), or --token T (from `runledger computer add ID` on the board)',
        );
      releases.push(takeProcessLock(computerLockPath(db, computerId), `computer ${computerId} on ${db}`));
      computer = new Computer({
        system,
        store,
        clock,
        computer: computerId,
        server,
        token,
        exec: options.exec,
        workspaceRoot: join(folder, 'workspaces', computerId),
        ...(options.repos ? { repos: options.repos } : {}),
        ...(options.push ? { push: true } : {}),
        ...(options.worktreeIdleDays !== undefined ? { worktreeIdleMs: Math.round(options.worktreeIdleDays * 86_400_000) } : {}),
        slots: options.slots ?? 1,
        ...(options.loginCapacity ? { loginCapacity: options.loginCapacity } : {}),
        heartbeatMs: (options.heartbeatS ?? 30) * 1000,
        ...(options.timeoutS !== undefined ? { defaultTimeoutS: options.timeoutS } : {}),
        ...(options.killGraceS !== undefined ? { killGraceMs: options.killGraceS * 1000 } : {}),
        log,
        ...(options.onConnectedElsewhere ? { onConnectedElsewhere: options.onConnectedElsewhere } : {}),
        ...(options.onRefused ? { onRefused: options.onRefused } : {}),
        ...(options.budgetNote !== undefined ? { budgetNote: options.budgetNote } : {}),
        tokenSource,
        // The board is back (its push stream connected again): the report's retry waiting goes at once.
        onPushConnected: () => report?.boardIsBack(),
      });
      await computer.start();
      if (options.server !== undefined && options.reportToBoard !== false) {
        const client = new BoardClient(BoardServers.parse(server), computerId, token);
        reportClient = client;
        report = new BoardReport({
          store,
          computer: computerId,
          send: (events) => client.report(events),
          abandon: () => client.close(),
          clock,
          log,
        });
        await report.start();
      }
      sessions = new SessionCloser({
        system,
        store,
        clock,
        computer: computerId,
        driver: options.sessionDriver ?? 'exec',
        ...(options.tmuxSocket ? { tmuxSocket: options.tmuxSocket } : {}),
        settings: { tickMs: (options.tickS ?? 10) * 1000, quietMs: (options.quietS ?? 120) * 1000 },
        ...(options.killGraceS !== undefined ? { killGraceMs: options.killGraceS * 1000 } : {}),
        log,
      });
      await sessions.start();
      log(`computer ${computerId} started (${options.slots ?? 1} slot(s), agent: ${options.exec})`);
    }
  } catch (error) {
    // Whatever had started stops before the log closes: a follower left running would read it closed.
    await report?.stop(0);
    reportClient?.close();
    sessions?.stop();
    await chores?.stop(0);
    await stopRetention?.();
    computer?.stop();
    await board?.close();
    for (const release of releases) release();
    await keeper.stop();
    stopSystem(system);
    await store.close();
    throw error;
  }

  const close = async () => {
    await chores?.stop();
    await stopRetention?.();
    sessions?.stop();
    await sessions?.settled();
    computer?.stop();
    await board?.close();
    await keeper.stop();
    stopSystem(system);
    // Last of what writes: what this computer recorded, its drain's last decisions included (a settle the
    // queue and the sessions answer after the computer stopped), reaches the board before it goes
    // (bounded: a board that is down is not waited for; the next start sends what is left).
    await report?.stop();
    reportClient?.close();
    await store.close();
    for (const release of releases) release();
  };

  return {
    store,
    url: board?.url ?? options.server ?? null,
    computerId: computer ? (options.computer ?? 'local') : null,
    board,
    computer,
    async drain(reason) {
      const drained = computer ? await drainComputer(computer, clock, (options.drainS ?? 60) * 1000, log, reason) : null;
      const unfinished = board ? await board.board.actor.read(unfinishedRuns) : null;
      await close();
      return { computer: drained, unfinished };
    },
    close,
  };
}

/** A computer of this daemon's board (its own, or the demo's second): registered on first start, its token kept beside the log. */
export async function localComputerToken(board: BoardServer, folder: string, computerId: string, clock: Clock): Promise<string> {
  const path = localTokenPath(folder, computerId);
  const known = existsSync(path);
  const token = secretFile(path);
  const stored = await board.board.actor.read((state) => tokenHashOf(state, computerId));
  if (stored === null) {
    await board.board.actor.input(boardInput.computerAdded(computerId, hashToken(token), clock.now()));
  } else if (stored !== hashToken(token)) {
    throw new Error(`computer ${computerId} is registered with another token than ${path}${known ? '' : ' (the file was just created)'}`);
  }
  return readFileSync(path, 'utf8').trim();
}

function unfinishedRuns(state: BoardState): NonNullable<ShutdownReport['unfinished']> {
  let queued = 0;
  const held: Record<string, number> = {};
  for (const run of Object.values(state.runs)) {
    if (isTerminal(run.state)) continue;
    if (run.computerId === null) queued++;
    else held[run.computerId] = (held[run.computerId] ?? 0) + 1;
  }
  return { queued, held };
}

function localTokenPath(folder: string, computerId: string): string {
  return join(folder, `computer-${computerId}.token`);
}

/** `listen EADDRINUSE` says neither what to do nor which option: the port, and --port, named. */
function portTaken(error: unknown, host: string, port: number): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') {
    return new Error(
      `port ${port} on ${host} is taken (EADDRINUSE: another runledger board, or another program): stop it, or give another port with --port P (--port 0 takes a free one)`,
      { cause: error },
    );
  }
  if (code === 'EACCES')
    return new Error(`port ${port} on ${host} may not be opened by this user: give another with --port P (above 1023)`, { cause: error });
  return error;
}
