import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { tokenHashOf } from '../../actors/board/boardQueries.ts';
import { type BoardState, isTerminal } from '../../actors/board/boardState.ts';
import type { Repositories } from '../../adapters/git/repositories.ts';
import { BoardClient, type BoardTransport } from '../../adapters/http/boardClient.ts';
import { BoardServers } from '../../adapters/http/boardServers.ts';
import { hashToken, secretFile, tokenPaths } from '../../adapters/http/tokens.ts';
import { describeForeignRow, type ForeignRow } from '../../events/codec.ts';
import { statusView } from '../../projections/statusView.ts';
import type { UsageState } from '../../projections/usage.ts';
import { type Clock, systemClock } from '../../runtime/actors/clock.ts';
import type { EventStore, OpenedLog } from '../../runtime/store/eventStore.ts';
import { isPostgresUrl, redactUrl } from '../../runtime/store/logLocation.ts';
import { openStore } from '../../runtime/store/open/openStore.ts';
import type { StoreFaults } from '../../runtime/store/sqlite/appendBatch.ts';
import { openSqliteStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { webView } from '../../web/webView.ts';
import { type BoardServer, makeBoardServer, type UnstartedBoard } from '../board/boardServer.ts';
import { driverLiveness } from '../board/chores/boardChores.ts';
import type { HookCommands } from '../board/chores/hooks/hookNames.ts';
import { PostgresPeers } from '../board/peers/postgresPeers.ts';
import type { DriverName } from '../computer/closer/sessionCloser.ts';
import type { Computer } from '../computer/computer.ts';
import { type DrainReport, drainComputer } from '../computer/drainComputer.ts';
import { boardLockPath, computerLockPath, takeProcessLock } from '../computer/processLock.ts';
import { type BoardCore, buildBoard } from './assembleBoard.ts';
import { assembleComputer } from './assembleComputer.ts';
import { assembleProcess, closeProcess, type ProcessParts, startFolds, startOrAbort } from './assembleProcess.ts';
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
  /** The log's last seq when this life opened it, before it wrote anything: the narration tells only what happens from there on. */
  readonly headAtStart: number;
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
 * Test seams of the daemon's edges (the CLI never sets them): the clock it reads time from, and
 * failures injected into its log's commits (a full disk, SQLite only).
 */
export interface DaemonPorts {
  readonly clock?: Clock;
  readonly storeFaults?: StoreFaults;
}

/**
 * `runledger daemon` (board and computer in one process: the computer's push stream comes over
 * loopback like any other's, its calls go to the board's API handler in the process), `--server` (a computer joining a remote board) and `runledger server`:
 * the options read, the real edges, and the assemblies (assembleBoard.ts, assembleComputer.ts).
 */
export async function startDaemon(options: DaemonOptions, ports: DaemonPorts = {}): Promise<Daemon> {
  const clock = ports.clock ?? systemClock;
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
  // What the log can do beyond the EventStore follows from the dialect opened, not from a test of its class: archives are a SQLite log's.
  const sqlite = onPostgres ? null : await openSqliteStore(db, { ...storeOptions, ...(ports.storeFaults ? { faults: ports.storeFaults } : {}) });
  const store: OpenedLog = sqlite ?? (await openStore(db, storeOptions));
  const headAtStart = await store.headSeq();
  const parts = assembleProcess({ clock, store, log });
  const computerId = options.boardOnly ? null : (options.computer ?? 'local');
  await startOrAbort(parts, async () => {
    let server = options.server ?? null;
    let token = options.token ?? null;
    let tokenSource = options.tokenSource ?? 'the token given with --token';
    // The board's host is made before the folds catch up, as the simulator makes it (sim/boardMachine.ts).
    const made = server === null ? await makeBoard(parts, options, { db, named, folder, foreignRows: storeOptions.foreignRows }) : null;
    await startFolds(parts);
    if (options.retainDays !== undefined) {
      const settings = {
        retainDays: options.retainDays,
        ...(options.deleteArchivesAfterDays !== undefined ? { deleteAfterDays: options.deleteArchivesAfterDays } : {}),
      };
      if (sqlite === null) {
        throw new Error('--retain-days keeps archives of a SQLite log only; on PostgreSQL it is designed (docs/retention.md) but not built yet');
      }
      parts.retention = await startRetention(sqlite, db, settings, clock, log);
    }
    // The board of this process, which its computer calls without HTTP (the push stream stays a WebSocket).
    let local: BoardTransport | null = null;
    if (server === null) {
      const board = await made!.start();
      server = board.url;
      local = board.local ?? null;
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
      parts.releases.push(takeProcessLock(computerLockPath(db, computerId), `computer ${computerId} on ${db}`));
      await startComputer(parts, options, { computerId, server, token, tokenSource, folder, local });
    }
  });

  const { board, computer } = parts;
  const close = () => closeProcess(parts);
  return {
    store,
    headAtStart,
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

/** Where the daemon's log is, as its board needs it: the lock's and the tokens' files, the folder hooks run in. */
interface LogPlace {
  readonly db: string;
  /** The log as narrated (a PostgreSQL URL without its password). */
  readonly named: string;
  readonly folder: string;
  readonly foreignRows: (row: ForeignRow) => void;
}

/** The board half: its lock and secrets, its peers on PostgreSQL, to be served on HTTP (`--host`, `--port`), with its chores. */
async function makeBoard(parts: ProcessParts, options: DaemonOptions, place: LogPlace): Promise<UnstartedBoard> {
  const { store, clock, log } = parts.ports;
  const { db } = place;
  // Boards on one PostgreSQL database are many by design (docs/rules.md#postgresql-board); on one SQLite file, one.
  const { sharedLog } = store;
  if (sharedLog === null) parts.releases.push(takeProcessLock(boardLockPath(db), `a board on ${db}`));
  // Several boards share the chores (one holds their lease) and the runs' heartbeats; one alone has nobody to share with.
  const peers = sharedLog
    ? new PostgresPeers(sharedLog, { clock, log, ...(options.boardLeaseS !== undefined ? { leaseMs: options.boardLeaseS * 1000 } : {}) })
    : null;
  const secrets = sharedLog
    ? { submitToken: null, boardSecret: await sharedLog.boardSecret() }
    : { submitToken: secretFile(tokenPaths(db).submitToken), boardSecret: secretFile(tokenPaths(db).boardSecret) };
  // The computers' reported events, in tables of their own beside the log.
  const reported = store.reportedEvents({ foreignRows: place.foreignRows });
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 7420;
  const { keeper } = parts;
  const serve = (core: BoardCore): UnstartedBoard => {
    const made = makeBoardServer({
      ...core,
      ...(reported ? { reported } : {}),
      host,
      port,
      status: () => statusView(keeper.state('board'), keeper.state('queue'), clock.now(), keeper.state('usage')),
      usage: () => keeper.state<UsageState>('usage').logins,
      // Boards sharing a PostgreSQL log read what computers reported to the others too.
      web: webView({ store, clock, projections: keeper, log, reported, ...(sharedLog ? { reportedPollMs: 1_000 } : {}) }),
    });
    return {
      board: made.board,
      start: async () => {
        const board = await made.start().catch((error: unknown) => {
          throw portTaken(error, host, port);
        });
        log(`board listening on ${board.url} (log ${place.named}); the live view: ${board.url}/`);
        return board;
      },
    };
  };
  return buildBoard(
    parts,
    {
      ...secrets,
      ...(options.leaseS !== undefined ? { leaseMs: options.leaseS * 1000 } : {}),
      hooks: options.hooks ?? {},
      hookCwd: place.folder,
      tickMs: (options.tickS ?? 10) * 1000,
    },
    // Liveness is read through this daemon's own session driver.
    { serve, peers, liveness: driverLiveness(() => parts.sessions?.driver ?? null) },
  );
}

/** The computer half: its agents and limits as the options give them, its board reached over HTTP (or in the process: `local`). */
async function startComputer(
  parts: ProcessParts,
  options: DaemonOptions,
  joined: { computerId: string; server: string; token: string; tokenSource: string; folder: string; local: BoardTransport | null },
): Promise<Computer> {
  const { computerId, server, token } = joined;
  const computer = await assembleComputer(
    parts,
    {
      computer: computerId,
      server,
      token,
      exec: options.exec,
      workspaceRoot: join(joined.folder, 'workspaces', computerId),
      ...(options.repos ? { repos: options.repos } : {}),
      ...(options.push ? { push: true } : {}),
      ...(options.worktreeIdleDays !== undefined ? { worktreeIdleMs: Math.round(options.worktreeIdleDays * 86_400_000) } : {}),
      slots: options.slots ?? 1,
      ...(options.loginCapacity ? { loginCapacity: options.loginCapacity } : {}),
      heartbeatMs: (options.heartbeatS ?? 30) * 1000,
      ...(options.timeoutS !== undefined ? { defaultTimeoutS: options.timeoutS } : {}),
      ...(options.killGraceS !== undefined ? { killGraceMs: options.killGraceS * 1000 } : {}),
      ...(options.onConnectedElsewhere ? { onConnectedElsewhere: options.onConnectedElsewhere } : {}),
      ...(options.onRefused ? { onRefused: options.onRefused } : {}),
      ...(options.budgetNote !== undefined ? { budgetNote: options.budgetNote } : {}),
      tokenSource: joined.tokenSource,
      sessions: {
        tickMs: (options.tickS ?? 10) * 1000,
        quietMs: (options.quietS ?? 120) * 1000,
        ...(options.tmuxSocket ? { tmuxSocket: options.tmuxSocket } : {}),
      },
    },
    {
      ...(joined.local ? { board: new BoardClient(joined.local, computerId, token) } : {}),
      // A joining computer sends its board a copy of its events (its log is its own); the demo's second shares the board's file.
      reportLink:
        options.server !== undefined && options.reportToBoard !== false ? () => new BoardClient(BoardServers.parse(server), computerId, token) : null,
      sessionDriver: options.sessionDriver ?? 'exec',
    },
  );
  parts.ports.log(`computer ${computerId} started (${options.slots ?? 1} slot(s), agent: ${options.exec})`);
  return computer;
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
