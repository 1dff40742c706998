import type { BoardState } from '../actors/board/boardState.ts';
import { loginOf, type QueueState } from '../actors/lane/queueState.ts';
import type { RunExecution } from '../actors/run/runState.ts';
import { codec } from '../events/catalog.ts';
import type { EventRow } from '../events/codec.ts';
import { boardProjection } from '../projections/board.ts';
import { noticesProjection } from '../projections/notices.ts';
import { deciders } from '../replay/deciders.ts';
import { replayLog } from '../replay/replayLog.ts';
import { rebuildProjections } from '../runtime/folds/keeper/rebuild.ts';
import { projections } from '../runtime/folds/keeper/registry.ts';
import { type RawRow, RowDecoder } from '../runtime/store/rowDecoder.ts';
import type { Execution } from './agents.ts';
import type { SimBoards } from './boards.ts';
import type { ComputerLife, ComputerMachine } from './computerMachine.ts';
import type { SimDisk } from './disk.ts';
import type { HookInvocation } from './hooks.ts';
import type { SimNetwork } from './network.ts';
import type { Scheduler } from './scheduler.ts';
import type { SessionStop } from './sessions.ts';

export interface Violation {
  readonly invariant: string;
  readonly step: number;
  /** Virtual ms since the world's start. */
  readonly at: number;
  readonly detail: string;
}

/** Every invariant the simulator checks, in the order the report lists them. */
export const INVARIANTS = [
  'runExecutedOnce', // a run's executions never overlap, all on one machine, each again only as its log allows (a limit, a refused resume)
  'loginLimitHolds', // a login at its usage limit starts nothing on its machine until the reset
  'limitedHeartbeated', // a run waiting out its login's limit is still heartbeated (its lease kept)
  'claimOneHolder', // the board grants a run to one computer life only
  'laneTurnsApart', // two turns of a lane never execute at once (unless the board ended the first)
  'wakeupForEveryWait', // a waiting run (parked, retrying) or a completion retry has its timer armed
  'drainEndsWithLife', // a life that did not begin a drain never answers 503 draining
  'leaseKept', // a run its live computer heartbeats over a healthy link is never reaped
  'parkedWhileLaneFree', // a parked run is unparked once its lane is free and the frame could reach it
  'hookAtMostOnce', // no hook runs twice for one event, across the board's lives; one a crash cut is recorded interrupted, an ended one its exit
  'noticesInOrder', // a subscription's notices are filed in the order of what it hears, each once, none skipped
  'sessionClosedBetweenTurns', // a close stops a session's agent only between turns, never in one
  'sessionClosedOnce', // a session is stopped once per close: never again before a turn ran in it, never closed twice in its log
  'noSpin', // virtual time moves on: no thousand steps within one virtual second (a busy loop), steps never used up
  'liveness', // once faults stop, every run ends within the bound
  'replayAgrees', // `replay` re-derives every decision of every log
  'rebuildEqualsLive', // `rebuild` of every log equals its live projections
] as const;
export type InvariantName = (typeof INVARIANTS)[number];

const COLUMNS = 'seq, stream, version, type, data, at, cause, actor';

type Statement = ReturnType<SimDisk['current']['prepare']>;
const statements = new WeakMap<SimDisk['current'], Map<string, Statement>>();

/** A statement of the checks prepared once per database (a life's), not at every call: some are asked at every agent start. */
function statement(db: SimDisk['current'], sql: string): Statement {
  let prepared = statements.get(db);
  if (!prepared) statements.set(db, (prepared = new Map()));
  let found = prepared.get(sql);
  if (!found) prepared.set(sql, (found = db.prepare(sql)));
  return found;
}

function keepingAll(decoder: RowDecoder): RowDecoder {
  decoder.keepFrom(0);
  return decoder;
}

/** Steps within one virtual second that make a busy loop: a burst of a world's frames and claims is far below it. */
const SPIN_STEPS = 1_000;

/** Slack for a frame to reach a computer and its claim to be decided, ms: a slow link takes up to 3 s each way. */
const PROMPT_MS = 8_000;

/** A log the invariants read: a machine's disk, or the boards' log (whose writes, when it counts none, are looked for every step). */
type Log = Pick<SimDisk, 'name' | 'current'> & Partial<Pick<SimDisk, 'writes'>>;

interface DiskScan {
  seen: number;
  /** The log's `writes` when it was last read. */
  writesSeen?: number;
  drainedThisLife: boolean;
  db?: SimDisk['current'];
  select?: ReturnType<SimDisk['current']['prepare']>;
}

/**
 * The checks of one world: after every step (cheap: what the logs gained since the last step, and the
 * live projections), at each agent start, and at the end (replay and rebuild of every log). Each
 * check counts itself, so the report says how often each invariant was actually put to the test.
 */
export class Invariants {
  readonly counts: Record<string, number> = Object.fromEntries(INVARIANTS.map((n) => [n, 0]));
  /** The board's state as the log has it (folded here, whichever board wrote what): every board's, once it caught up. */
  boardState: BoardState | null = null;
  /**
   * Keeps every row it decoded (from seq 0 on): the notices' check at the end reads the board's whole
   * log again, and finds each row the scans decoded as it was (the decoder checks the row is the same).
   */
  private readonly decoder = keepingAll(new RowDecoder(codec, 'fail'));
  private pending: Violation | null = null;
  private readonly scans = new Map<string, DiskScan>();
  private readonly claims = new Map<string, string>();
  /** Runs the board's log says ended (finished, cancelled, reaped). */
  private readonly settled = new Set<string>();
  private readonly fullChanged = new Map<string, number>();
  private readonly full = new Set<string>();
  private readonly laneFreeSince = new Map<string, number>();
  private readonly connectedSince = new Map<string, number>();
  /** Each run's last offer: when, to whom. */
  private readonly offers = new Map<string, { at: number; computers: readonly string[] }>();
  private step = 0;
  /** Every hook command started, by the seq of the event it answers. */
  private readonly hooks = new Map<number, HookInvocation>();

  constructor(
    private readonly w: {
      scheduler: Scheduler;
      network: SimNetwork;
      boards: SimBoards;
      leaseMs: number;
      say: (line: string) => void;
    },
  ) {}

  private get now(): number {
    return this.w.scheduler.now;
  }

  private check(name: InvariantName, ok: boolean, detail: () => string): void {
    this.counts[name]!++;
    if (!ok && !this.pending) this.pending = { invariant: name, step: this.step, at: this.now, detail: detail() };
  }

  /** A disk became full or writable again: waits decided meanwhile may be retried rather than armed. */
  diskFull(name: string): void {
    this.fullChanged.set(name, this.now);
    if (this.full.has(name)) this.full.delete(name);
    else this.full.add(name);
  }

  private diskQuiet(name: string): boolean {
    return !this.full.has(name) && this.now - (this.fullChanged.get(name) ?? -Infinity) > 10_000;
  }

  agentStarted(execution: Execution, machines: readonly ComputerMachine[]): void {
    const others = this.allExecutions.filter((e) => e !== execution);
    this.allExecutions.push(execution);
    const alive = new Set(machines.flatMap((m) => (m.life ? [m.life.name] : [])));
    const machine = machines.find((m) => m.life?.name === execution.life);
    if (machine) this.machineOfLife.set(execution.life, machine.disk.name);
    this.executedAgain(execution, others, alive, machine);
    if (machine) this.limitHolds(execution, machine);
    const overlapping = others.find(
      (e) => e.lane === execution.lane && e.runId !== execution.runId && e.endedAt === null && alive.has(e.life) && !this.settledOnBoard(e.runId),
    );
    this.check(
      'laneTurnsApart',
      !overlapping,
      () =>
        `run ${execution.runId} of ${execution.lane} started in ${execution.life} while run ${overlapping!.runId} of the lane executes in ${overlapping!.life}`,
    );
  }

  private readonly allExecutions: Execution[] = [];
  /** Each life's machine (its disk's name): a run's executions all happen on the machine its log is on. */
  private readonly machineOfLife = new Map<string, string>();
  /** Per disk and login, the latest `notBefore` of a `run.limit.waiting` (that machine's clock). */
  private readonly limits = new Map<string, Map<string, number>>();
  /** When (world time) the last limit seen lifts: liveness allows for it. */
  lastResetAt = -Infinity;

  /**
   * What the run's log on this machine allows: a first execution, and one more for each recorded
   * `run.limit.reached` (it runs its turn again after the reset) and each fresh retry of a refused
   * resume (a `run.execution.requested` decided from the refusing process's exit). Earlier executions
   * have all ended (or died with their life), and all ran on this machine.
   */
  private executedAgain(execution: Execution, others: readonly Execution[], alive: ReadonlySet<string>, machine: ComputerMachine | undefined): void {
    const prior = others.filter((e) => e.runId === execution.runId);
    if (prior.length === 0) {
      this.check('runExecutedOnce', true, () => '');
      return;
    }
    const running = prior.find((e) => e.endedAt === null && alive.has(e.life));
    const elsewhere = prior.find((e) => this.machineOfLife.get(e.life) !== machine?.disk.name);
    let permits = 0;
    if (machine && !running && !elsewhere) {
      try {
        const rows = statement(
          machine.disk.current,
          `SELECT e.type, e.data, c.type AS causeType FROM events e LEFT JOIN events c ON c.seq = e.cause
           WHERE e.stream = ? AND e.type IN ('run.limit.reached', 'run.execution.requested')`,
        ).all(`${execution.computer}/run:${execution.runId}`) as { type: string; data: string; causeType: string | null }[];
        for (const row of rows)
          if (row.type === 'run.limit.reached' || (row.causeType === 'run.process.exited' && JSON.parse(row.data).resume === null)) permits++;
      } catch {
        permits = Infinity;
      }
    }
    this.check('runExecutedOnce', !running && !elsewhere && prior.length <= permits, () =>
      running
        ? `run ${execution.runId} started in ${execution.life} while it still executes in ${running.life}`
        : elsewhere
          ? `run ${execution.runId} started in ${execution.life} after it executed on another machine (${elsewhere.life})`
          : `run ${execution.runId} started a ${prior.length + 1}th time in ${execution.life}, though its log allows ${permits + 1} (no limit reached, no refused resume since)`,
    );
  }

  /** A login at its limit (the queue's `run.limit.waiting`) starts nothing on that machine before its `notBefore`. */
  private limitHolds(execution: Execution, machine: ComputerMachine): void {
    this.scanComputer(machine);
    const life = machine.life!;
    const queued = life.keeper.state<Record<string, QueueState>>('queue')[machine.id]?.runs[execution.runId];
    const login = loginOf({ agentId: queued?.agentId ?? null });
    const until = this.limits.get(machine.disk.name)?.get(login) ?? -Infinity;
    this.check(
      'loginLimitHolds',
      execution.startedAt >= until,
      () => `run ${execution.runId} started in ${execution.life} ${until - execution.startedAt} ms before login ${login}'s limit lifts`,
    );
  }

  /** Per machine and session, `executionsBefore` of its last stop. */
  private readonly sessionStops = new Map<string, number>();
  /** Per log and session stream, what its close last recorded: intended, or closed. */
  private readonly closes = new Map<string, 'intended' | 'closed'>();

  /**
   * A close stopped a session's agent: no turn of it runs on that machine now (a close never cuts one),
   * and one ran since its last stop (else its agent was down already: stopped twice for one close).
   */
  sessionStopped(stop: SessionStop, machines: readonly ComputerMachine[]): void {
    const { machine, life, sessionId, executionsBefore } = stop;
    const inTurn = this.allExecutions.find((e) => e.life === life && e.session === sessionId && e.endedAt === null);
    this.check(
      'sessionClosedBetweenTurns',
      !inTurn || !machines.some((m) => m.life?.name === life),
      () => `${life} stopped session ${sessionId} while run ${inTurn!.runId} is in a turn in it`,
    );
    const key = `${machine}|${sessionId}`;
    const last = this.sessionStops.get(key);
    const ranSince = last === undefined || this.allExecutions.slice(last).some((e) => e.session === sessionId && e.life.startsWith(`${machine}#`));
    this.check('sessionClosedOnce', ranSince, () => `${life} stopped session ${sessionId} again, though no turn ran in it since its last stop`);
    this.sessionStops.set(key, executionsBefore);
  }

  /** A session's close is recorded closed once per intent: never twice with no run's end asking again between. */
  private closeRecorded(disk: string, row: EventRow): void {
    const key = `${disk}|${row.stream}`;
    if (row.type === 'session.close.intended') this.closes.set(key, 'intended');
    if (row.type !== 'session.closed') return;
    const was = this.closes.get(key);
    this.check(
      'sessionClosedOnce',
      was === 'intended',
      () => `${disk}: ${row.stream} was recorded closed (seq ${row.seq}) with no close intended since ${was ?? 'ever'}`,
    );
    this.closes.set(key, 'closed');
  }

  /** Each subscription's notices filed so far, by the seq each tells of. */
  private readonly filed = new Map<string, number[]>();

  private noticeFiled({ subscriptionId, source }: { subscriptionId: string; source: number }): void {
    const sources = this.filed.get(subscriptionId) ?? [];
    const last = sources.at(-1) ?? -Infinity;
    sources.push(source);
    this.filed.set(subscriptionId, sources);
    this.check('noticesInOrder', source > last, () => `subscription ${subscriptionId} filed the notice of seq ${source} after that of seq ${last}`);
  }

  /**
   * At the end: what each subscription filed is what it hears, from the start, in order, none skipped.
   * What it hears is the notices index folded over the board's log without its filings (all it ever heard stays due).
   */
  private noticesComplete(): void {
    const rows = this.w.boards.log.current.prepare(`SELECT ${COLUMNS} FROM events ORDER BY seq`).raw(true).all() as RawRow[];
    let index = noticesProjection.initial();
    for (const row of rows) {
      const event = this.decoder.decode(row);
      if (event && event.type !== 'notice.filed') index = noticesProjection.evolve(index, event);
    }
    for (const [subscriptionId, heard] of Object.entries(index.due)) {
      const filed = this.filed.get(subscriptionId) ?? [];
      const expected = heard.slice(0, filed.length).map((n) => n.source);
      this.check(
        'noticesInOrder',
        JSON.stringify(expected) === JSON.stringify(filed),
        () => `subscription ${subscriptionId} filed the notices of seqs ${filed.join(',')}, though it heard ${heard.map((n) => n.source).join(',')}`,
      );
    }
  }

  /** A hook command starts: the first for its event, whichever board life runs it. */
  hookInvoked(invocation: HookInvocation): void {
    const first = this.hooks.get(invocation.effect);
    if (!first) this.hooks.set(invocation.effect, invocation);
    this.check(
      'hookAtMostOnce',
      !first,
      () =>
        `${invocation.hook} for seq ${invocation.effect}${invocation.runId ? ` (run ${invocation.runId})` : ''} started in board#${invocation.life} after it started in board#${first!.life}${first!.cut ? ', which a crash cut' : ''}`,
    );
  }

  /**
   * Each hook started is settled once on the board's log: interrupted if a crash cut it, else with the exit
   * it had. Of two boards, a hook is recorded only under the chores' lease epoch it was taken under: one
   * whose board lost that epoch before its exit was recorded (a full log cost it the lease) is recorded
   * interrupted by the next holder, its board alive or not.
   */
  /**
   * A hook cut by a crash that no record settles yet: the next holder of the chores' lease records it
   * interrupted once it holds the lease (the dead holder's must expire first), so the world goes on until then.
   */
  hookUnrecorded(): boolean {
    const cut = [...this.hooks.values()].filter((hook) => hook.cut);
    if (cut.length === 0) return false;
    try {
      const recorded = new Set(
        (
          statement(
            this.w.boards.log.current,
            `SELECT data FROM events WHERE stream = 'outbox:hooks' AND type IN ('hook.exited', 'hook.interrupted', 'outbox.interrupted')`,
          )
            .pluck()
            .all() as string[]
        ).map((data) => (JSON.parse(data) as { effect: number }).effect),
      );
      return cut.some((hook) => !recorded.has(hook.effect));
    } catch {
      return false;
    }
  }

  private hooksSettled(): void {
    let rows: { type: string; data: string }[];
    let leaseEpoch: number | null = null;
    try {
      const log = this.w.boards.log.current;
      rows = log
        .prepare(
          `SELECT type, data FROM events WHERE stream = 'outbox:hooks' AND type IN ('hook.exited', 'hook.interrupted', 'outbox.interrupted', 'outbox.taken')`,
        )
        .all() as typeof rows;
      if (this.w.boards.several)
        leaseEpoch = (log.prepare(`SELECT epoch FROM board_leases WHERE name = 'chores'`).pluck().get() as number | undefined) ?? null;
    } catch {
      return;
    }
    const settled = new Map<number, { type: string; exitCode: number | null }[]>();
    const takenUnder = new Map<number, number>();
    for (const row of rows) {
      if (row.type === 'outbox.taken') {
        const take = JSON.parse(row.data) as { effects: number[]; epoch?: number };
        for (const effect of take.effects) if (take.epoch !== undefined) takenUnder.set(effect, take.epoch);
        continue;
      }
      const data = JSON.parse(row.data) as { effect: number; exitCode?: number | null };
      settled.set(data.effect, [...(settled.get(data.effect) ?? []), { type: row.type, exitCode: data.exitCode ?? null }]);
    }
    for (const hook of this.hooks.values()) {
      // Still running as the world ends (a hang near its end): nothing to say yet.
      if (!hook.cut && hook.endedAt === null) continue;
      const records = settled.get(hook.effect) ?? [];
      // One that ended is recorded with its exit, or interrupted when its life died, or lost the epoch it took it under, before that record committed.
      const epoch = takenUnder.get(hook.effect);
      const takerGone = this.w.boards.lifeNumbered(hook.life) === null || (epoch !== undefined && leaseEpoch !== null && leaseEpoch !== epoch);
      const want = hook.cut ? 'hook.interrupted' : takerGone ? 'hook.exited or hook.interrupted' : 'hook.exited';
      const record = records[0];
      const ok =
        records.length === 1 &&
        (record!.type === 'hook.interrupted'
          ? hook.cut || takerGone
          : !hook.cut && record!.type === 'hook.exited' && record!.exitCode === hook.exitCode);
      // Its exit not recorded yet by the life that runs it: the record waits for a log that can take it (a full disk just healed).
      if (records.length === 0 && !takerGone) continue;
      this.check(
        'hookAtMostOnce',
        ok,
        () =>
          `${hook.hook} for seq ${hook.effect} (board#${hook.life}, ${hook.cut ? 'cut by a crash' : `exit ${hook.exitCode}`}) is settled as ${JSON.stringify(records)}, not once as ${want}`,
      );
    }
  }

  private burstFrom = 0;
  private burst = 0;

  /** After each step: what the logs gained, then the live states. The first violation, if any. */
  afterStep(machines: readonly ComputerMachine[], step: number, what: string): Violation | null {
    this.step = step;
    if (this.now - this.burstFrom > 1_000) {
      this.burstFrom = this.now;
      this.burst = 0;
    }
    this.burst++;
    this.check('noSpin', this.burst <= SPIN_STEPS, () => `${SPIN_STEPS} steps within one virtual second, the last: ${what} (a busy loop)`);
    this.scanBoard(machines);
    for (const machine of machines) this.scanComputer(machine);
    this.trackBoard();
    for (const machine of machines) this.checkWaits(machine);
    const found = this.pending;
    this.pending = null;
    return found;
  }

  private newRows(disk: Log): EventRow[] {
    let scan = this.scans.get(disk.name);
    if (!scan) {
      scan = { seen: 0, drainedThisLife: false };
      this.scans.set(disk.name, scan);
    }
    let current: SimDisk['current'];
    try {
      current = disk.current;
    } catch {
      return [];
    }
    // One prepared statement per database (a life's), not one per step.
    if (scan.db !== current) {
      scan.db = current;
      scan.select = current.prepare('SELECT seq, stream, version, type, data, at, cause, actor FROM events WHERE seq > ? ORDER BY seq');
    } else if (disk.writes !== undefined && disk.writes === scan.writesSeen) return [];
    scan.writesSeen = disk.writes;
    const rows = scan.select!.all(scan.seen) as EventRow[];
    if (rows.length) scan.seen = rows.at(-1)!.seq;
    return rows;
  }

  /** Whether the board's log says the run ended: a settled run leaves the board's state (issue 16). */
  settledOnBoard(runId: string): boolean {
    return this.settled.has(runId);
  }

  private scanBoard(machines: readonly ComputerMachine[]): void {
    for (const row of this.newRows(this.w.boards.log)) {
      const event = this.decoder.decode([row.seq, row.stream, row.version, row.type, row.data, row.at, row.cause, row.actor]);
      if (event) {
        this.boardState = boardProjection.evolve(this.boardState ?? boardProjection.initial(), event);
        this.boardFolded = true;
      }
      if (row.type === 'board.run.finished' || row.type === 'board.run.cancelled' || row.type === 'board.run.resolved') {
        this.settled.add((JSON.parse(row.data) as { runId: string }).runId);
      }
      if (row.type === 'board.run.claimed') {
        const data = JSON.parse(row.data) as { runId: string; computerId: string; incarnation?: string };
        const holder = `${data.computerId}/${data.incarnation ?? '-'}`;
        const first = this.claims.get(data.runId);
        if (!first) this.claims.set(data.runId, holder);
        this.check('claimOneHolder', !first || first === holder, () => `run ${data.runId} granted to ${holder} after it was granted to ${first}`);
      }
      if (row.type === 'board.run.offered') {
        const data = JSON.parse(row.data) as { runId: string; computers: string[] };
        this.offers.set(data.runId, { at: row.at, computers: data.computers });
      }
      if (row.type === 'notice.filed') this.noticeFiled(JSON.parse(row.data) as { subscriptionId: string; source: number });
      if (row.type === 'board.heartbeat.lapsed') this.lapsed(JSON.parse(row.data) as { runId: string }, row.at, row.actor, machines);
    }
  }

  /** A lapse is a finding only when nothing in the world excuses it: a live holder, a healthy link, lives older than the lease. */
  private lapsed({ runId }: { runId: string }, at: number, writer: string, machines: readonly ComputerMachine[]): void {
    // From the claim recorded (the reaped run may have left the board's state already).
    const holder = this.claims.get(runId)?.split('/')[0] ?? null;
    const window = at - this.w.leaseMs - 35_000;
    // The board that reaped it: its life must have been up for the whole lease to have heard the heartbeats.
    const board = this.w.boards.writing(writer)?.life ?? null;
    const keeping = machines.find(
      (m) =>
        m.id === holder &&
        m.life?.ready === true &&
        m.life.startedAt <= window &&
        (m.life.liveSince.get(runId) ?? Infinity) <= window &&
        !this.w.network.impairedBetween(m.id, window, at),
    );
    const excused = !keeping || !board || board.startedAt > window;
    this.check(
      'leaseKept',
      excused,
      () => `run ${runId} was reaped though ${keeping!.life!.name} held it live since ${keeping!.life!.liveSince.get(runId)} over a healthy link`,
    );
  }

  private scanComputer(machine: ComputerMachine): void {
    const scan = () => this.scans.get(machine.disk.name)!;
    for (const row of this.newRows(machine.disk)) {
      if (row.type === 'computer.started') scan().drainedThisLife = false;
      if (row.type === 'session.close.intended' || row.type === 'session.closed') this.closeRecorded(machine.disk.name, row);
      if (row.type === 'drain.started') scan().drainedThisLife = true;
      if (row.type === 'run.limit.waiting') {
        const data = JSON.parse(row.data) as { login: string; notBefore: number };
        let logins = this.limits.get(machine.disk.name);
        if (!logins) this.limits.set(machine.disk.name, (logins = new Map()));
        logins.set(data.login, Math.max(logins.get(data.login) ?? -Infinity, data.notBefore));
        const lifeNow = machine.life?.clock.now() ?? row.at;
        this.lastResetAt = Math.max(this.lastResetAt, this.now + (data.notBefore - lifeNow));
      }
      if (row.type === 'frame.acknowledged') {
        const data = JSON.parse(row.data) as { status: number; reason: string; runId?: string };
        const drained = scan().drainedThisLife;
        this.check(
          'drainEndsWithLife',
          data.status !== 503 || drained,
          () => `${machine.machine} answered run ${data.runId} 503 draining in a life that never began to drain`,
        );
      }
    }
    const life = machine.life;
    if (life?.ready) for (const runId of life.computer.runs.liveRuns()) if (!life.liveSince.has(runId)) life.liveSince.set(runId, this.now);
  }

  /** Whether the board's state folded events since `trackBoard` last followed it. */
  private boardFolded = false;

  /** Follows, from the board's state, since when each lane is free and each computer connected. */
  private trackBoard(): void {
    const state = this.boardState;
    // A state folded no further since the last look changes nothing here (the fold changes it in place: a flag, not its identity).
    if (!state || !this.boardFolded) return;
    this.boardFolded = false;
    // A lane is busy while a run of it is claimed and not terminal: its holder (lanes stay in the state, settled runs do not).
    for (const lane in state.lanes) {
      if (state.lanes[lane]!.holder !== null) this.laneFreeSince.delete(lane);
      else if (!this.laneFreeSince.has(lane)) this.laneFreeSince.set(lane, this.now);
    }
    const connected = new Set(state.connected);
    // A Map's iteration goes on past an entry deleted under it.
    for (const id of this.connectedSince.keys()) if (!connected.has(id)) this.connectedSince.delete(id);
    for (const id of connected) if (!this.connectedSince.has(id)) this.connectedSince.set(id, this.now);
  }

  private checkWaits(machine: ComputerMachine): void {
    const life = machine.life;
    if (!life?.ready || !life.owner.alive) return;
    const queue = life.keeper.state<Record<string, QueueState>>('queue')[machine.id];
    const executions = life.keeper.state<Record<string, Record<string, RunExecution>>>('executions')[machine.id] ?? {};
    const quiet = this.diskQuiet(machine.disk.name);
    if (quiet) this.checkTimers(machine, life, queue, executions);
    this.checkParked(machine, life, queue, quiet);
    // Read only when a run waits out a limit: these checks run for every machine after every step.
    let beating: Set<string> | null = null;
    for (const runId in executions) {
      if (executions[runId]!.phase !== 'limited') continue;
      beating ??= new Set(life.computer.runs.liveRuns());
      this.check('limitedHeartbeated', beating.has(runId), () => `${life.name}: run ${runId} waits out its login's limit unheartbeated`);
    }
  }

  /**
   * Every wait of a life has a timer of its own armed for the instant it ends: a parked or retrying run,
   * a login at its usage limit (its reset), a completion retry. Counted per instant, as a timer tells only
   * when it is due: a run held at its login's limit and the login's reset end at the same instant, and the
   * one timer left when the other was dropped must not pass for both (the run then waits for ever, seen
   * only by liveness at the world's end).
   */
  private checkTimers(machine: ComputerMachine, life: ComputerLife, queue: QueueState | undefined, executions: Record<string, RunExecution>): void {
    const now = life.clock.now();
    // Each wait's sentence is made only when a check fails: this runs for every machine after every step.
    const waits = new Map<number, (() => string)[]>();
    const wait = (until: number, what: () => string) => {
      if (until <= now) return;
      const at = waits.get(until);
      if (at) at.push(what);
      else waits.set(until, [what]);
    };
    const runs = queue?.runs ?? {};
    for (const id in runs) {
      const run = runs[id]!;
      if (run.status === 'waiting') wait(run.notBefore, () => `run ${run.runId} waits`);
    }
    const limits = queue?.loginLimits ?? {};
    for (const login in limits) wait(limits[login]!.until, () => `login ${login} is at its usage limit`);
    for (const runId in executions) {
      const run = executions[runId]!;
      // A completion whose next attempt is in flight already (a clock stepped back since it was sent) waits for nothing.
      if (run.phase === 'completing' && run.completionNotBefore > now && !this.completionInFlight(machine, runId))
        wait(run.completionNotBefore, () => `the completion of run ${runId} is due`);
    }
    for (const [until, what] of waits) {
      const armed = this.w.scheduler.timersFor(life.owner, until);
      this.check(
        'wakeupForEveryWait',
        armed >= what.length,
        () =>
          `${life.name}: ${what.map((sentence) => sentence()).join(', ')} at ${until} (in ${until - now} ms), with ${armed} timer(s) armed for then`,
      );
    }
  }

  /** A parked run the board offered to this computer again once its lane was free: that frame should have unparked it. */
  private checkParked(machine: ComputerMachine, life: ComputerLife, queue: QueueState | undefined, quiet: boolean): void {
    const now = life.clock.now();
    const board = this.boardState;
    if (!board) return;
    const runs = queue?.runs ?? {};
    for (const id in runs) {
      const run = runs[id]!;
      if (run.status !== 'waiting' || run.notBefore <= now || run.busyWaits === 0) continue;
      const onBoard = board.runs[run.runId];
      const freeSince = this.laneFreeSince.get(run.lane);
      const since = this.connectedSince.get(machine.id);
      const offer = this.offers.get(run.runId);
      if (onBoard?.state !== 'queued' || freeSince === undefined || since === undefined) continue;
      if (!offer?.computers.includes(machine.id) || offer.at < freeSince) continue;
      const from = Math.max(offer.at, since, life.startedAt);
      const healthy = !this.w.network.impairedBetween(machine.id, from - PROMPT_MS, this.now) && this.diskQuiet(this.w.boards.log.name) && quiet;
      if (!healthy) continue;
      this.check(
        'parkedWhileLaneFree',
        this.now - from <= PROMPT_MS,
        () =>
          `${life.name}: run ${run.runId} of ${run.lane} stays parked (until ${run.notBefore - now} ms from now) though its lane is free on the board since ${(this.now - freeSince) / 1000} s`,
      );
    }
  }

  /** Whether the run's last record on the machine is a completion sent (its answer not yet recorded). */
  private completionInFlight(machine: ComputerMachine, runId: string): boolean {
    try {
      const last = statement(machine.disk.current, 'SELECT type FROM events WHERE stream = ? ORDER BY seq DESC LIMIT 1')
        .pluck()
        .get(`${machine.id}/run:${runId}`);
      return last === 'run.completion.requested';
    } catch {
      return false;
    }
  }

  /** The world used up its steps before its time bound: something kept the scheduler busy. */
  spun(step: number, what: string): Violation {
    this.counts.noSpin!++;
    return { invariant: 'noSpin', step, at: this.now, detail: `the world used up its ${step} steps before its time bound; the last: ${what}` };
  }

  /** Once faults stopped and the bound passed: every run is terminal on the board. */
  liveness(runIds: readonly string[], step: number, _machines: readonly ComputerMachine[]): Violation | null {
    this.step = step;
    const state = this.boardState;
    const open = runIds.filter((id) => !this.settledOnBoard(id));
    const up = this.w.boards.anyLife() !== null;
    this.check('liveness', open.length === 0 && up, () =>
      !up
        ? 'every board is down at the end'
        : `runs not ended within the bound: ${open.map((id) => `${id.slice(0, 8)} ${state?.runs[id]?.state ?? 'never submitted'}`).join(', ')}`,
    );
    const found = this.pending;
    this.pending = null;
    return found;
  }

  /** Every log replays; every live machine's projections equal their rebuild (its live state checkpointed first). */
  async atEnd(machines: readonly ComputerMachine[], step: number): Promise<Violation | null> {
    this.step = step;
    this.hooksSettled();
    this.noticesComplete();
    // Each board's live projections are checked against the rebuild of the log they share (its checkpoint first), the log replayed once.
    const boardKeepers = this.w.boards.machines.flatMap((m) => (m.life ? [m.life.keeper] : []));
    const lives = [
      ...(boardKeepers.length ? boardKeepers : [null]).map((keeper, i) => ({ disk: this.w.boards.log, keeper, replay: i === 0 })),
      ...machines.map((m) => ({ disk: m.disk, keeper: m.life?.ready ? m.life.keeper : null, replay: true })),
    ];
    for (const { disk, keeper, replay } of lives) {
      if (keeper && !disk.full) await keeper.checkpoint();
      const snapshot = await disk.snapshot();
      try {
        const report = replay ? await replayLog(snapshot, deciders) : null;
        if (report)
          this.check('replayAgrees', report.ok, () =>
            report.ok
              ? ''
              : `${disk.name}: seq ${report.input.seq} (${report.input.type}) decides otherwise than recorded: ${JSON.stringify(report).slice(0, 600)}`,
          );
        if (!keeper || disk.full) continue;
        const reports = await rebuildProjections(snapshot, projections);
        const differs = reports.find((r) => !r.equal);
        this.check(
          'rebuildEqualsLive',
          !differs,
          () => `${disk.name}: projection ${differs!.projection} differs from its rebuild: ${differs!.detail}`,
        );
      } finally {
        await snapshot.close();
      }
    }
    const found = this.pending;
    this.pending = null;
    return found;
  }

  /** A log's rows as determinism compares them: the writer's host and pid (of this process) left out. */
  rowsOf(disk: Log): string[] {
    let rows: { seq: number; stream: string; type: string; data: string; at: number; cause: number | null }[];
    try {
      rows = disk.current.prepare('SELECT seq, stream, type, data, at, cause FROM events ORDER BY seq').all() as typeof rows;
    } catch {
      return [];
    }
    return rows.map(
      (r) => `${disk.name} ${r.seq} ${r.stream} ${r.type} ${r.at} ${r.cause ?? '-'} ${r.data.replace(/"(host|pid)":("[^"]*"|\d+),?/g, '')}`,
    );
  }
}
