import { boardInput } from '../actors/board/boardInputs.ts';
import type { BoardState } from '../actors/board/boardState.ts';
import { NOTICE_KINDS } from '../actors/board/inbox/noticeKinds.ts';
import { hashToken } from '../adapters/http/tokens.ts';
import { openSubscription, type SubscriptionRequest } from '../apps/board/chores/notices/subscriptions.ts';
import { BEHAVIOURS, type Execution, FIRST_SIM_PID, simPrompt } from './agents.ts';
import type { BoardLife } from './boardMachine.ts';
import { SimBoards } from './boards.ts';
import { ComputerMachine, type ComputerWorld, type SimBoardCalls } from './computerMachine.ts';
import { describeFault, drawPlan, type Fault, type FaultKind } from './faults.ts';
import { Invariants, type Violation } from './invariants.ts';
import { SimNetwork } from './network.ts';
import { Prng } from './prng.ts';
import { exactTimers, fuzzyTimers, Owner, Scheduler, type TimerFuzz } from './scheduler.ts';
import { installSettle, settle } from './settle.ts';

export interface WorldOptions {
  readonly seed: number;
  readonly faults: ReadonlySet<FaultKind>;
  /** At most this many steps (a step: one timer or message, then the event loop settled). */
  readonly steps?: number;
  /** The fault plan to play instead of the one the seed draws (a shrunk history). */
  readonly plan?: readonly Fault[];
  /** Only these of the runs the seed draws (their indexes): a shrunk workload. */
  readonly keepRuns?: readonly number[];
  /** This many lanes instead of the seed's 2–4 (one lane: every turn contends, busy answers and resends abound). */
  readonly lanes?: number;
  /** `small` for CI: fewer runs, a shorter fault window. */
  readonly size?: 'small' | 'normal';
  /** Planted bugs the simulator injects itself (test seams): see sim/planted.ts. */
  readonly wrapBoard?: (computer: string, board: SimBoardCalls) => SimBoardCalls;
  /** Keep every narrated line (for a violation's report). */
  readonly keepLog?: boolean;
  /** Return every log's rows even when the world held (determinism compares them); a failing world always does. */
  readonly keepRows?: boolean;
  /** Outages (a link unreachable, a disk full) last at most this long: CI's profile, see sim/README section. */
  readonly maxOutageMs?: number;
  /** Two boards on one shared log (PostgreSQL, docs/rules.md#postgresql-board) instead of one on its own disk. */
  readonly boards?: 1 | 2;
  /**
   * Of two boards: their log on this real PostgreSQL database, an empty log's URL (sim/pgLog.ts). Its
   * answers come on real I/O, so such a world is not played again row for row: its invariants are what count.
   */
  readonly postgres?: string;
  /**
   * Many computers instead of the two or three a seed draws (the draw is still made, so a seed's other
   * draws stay the same): dispatch one offer at a time among many (docs/rules.md#dispatch).
   */
  readonly computers?: number;
}

export interface Step {
  readonly n: number;
  readonly at: number;
  readonly what: string;
}

export interface WorldResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly violation: Violation | null;
  readonly steps: number;
  readonly virtualMs: number;
  readonly realMs: number;
  readonly checks: Readonly<Record<string, number>>;
  readonly plan: readonly Fault[];
  readonly history: readonly Step[];
  readonly runs: number;
  /** How many runs the seed drew (`keepRuns` may keep fewer). */
  readonly drawnRuns: number;
  readonly computers: number;
  /** Every log's rows in order (disk, type, stream, data, at), host and pid fields left out: what determinism compares. */
  readonly rows: readonly string[];
  readonly log: readonly string[];
}

interface PlannedRun {
  readonly runId: string;
  readonly lane: string;
  readonly prompt: string;
  readonly timeoutS: number;
  readonly submitAt: number;
  readonly cancelAt: number | null;
}

const LEASE_MS = 90_000;

const SIM_SUBSCRIPTIONS = (lane: string): SubscriptionRequest[] => [
  { subscriptionId: 'sub-all', sessionId: 'sim-session-a', kinds: NOTICE_KINDS },
  { subscriptionId: 'sub-ends', sessionId: 'sim-session-b', lane, kinds: ['run.ended'] },
];

/** Builds the world a seed names, plays it, and checks it: the whole of one simulated history. */
export async function runWorld(options: WorldOptions): Promise<WorldResult> {
  installSettle();
  const realStart = performance.now();
  const root = new Prng(options.seed);
  const shape = root.fork();
  const planPrng = root.fork();
  const runtime = root.fork();
  // Drawn after the others, so the board's hooks leave every other draw of a seed as it was.
  const hookDraws = root.fork();
  const small = options.size === 'small';
  const maxSteps = options.steps ?? 20_000;
  const scheduler = new Scheduler();
  const start = scheduler.now;
  const network = new SimNetwork(scheduler, runtime.fork());
  const log: string[] = [];
  const say = (line: string) => {
    if (options.keepLog) log.push(`${((scheduler.now - start) / 1000).toFixed(3)} ${line}`);
  };
  const fuzz: TimerFuzz = options.faults.has('timers') ? fuzzyTimers(runtime.fork()) : exactTimers;
  const boards = new SimBoards({
    count: options.boards ?? 1,
    scheduler,
    fuzz: () => fuzz,
    leaseMs: LEASE_MS,
    say,
    hooks: { prng: hookDraws, invoked: (invocation) => invariants.hookInvoked(invocation) },
    // Drawn after every other fork, and only with two boards: a world of one board draws as it always did.
    prng: () => root.fork(),
    ...(options.postgres === undefined ? {} : { postgres: options.postgres }),
  });
  const executions: Execution[] = [];
  const invariants = new Invariants({ scheduler, network, boards, leaseMs: LEASE_MS, say });
  const world: ComputerWorld = {
    seed: options.seed,
    scheduler,
    network,
    boards,
    prng: runtime,
    fuzz: () => fuzz,
    log: say,
    executions,
    nextPid: FIRST_SIM_PID,
    onStart: (execution) => invariants.agentStarted(execution, machines()),
    sessionStopped: (stop) => invariants.sessionStopped(stop, machines()),
    ...(options.wrapBoard ? { wrapBoard: options.wrapBoard } : {}),
  };

  // The shape of the world: computers, lanes, runs.
  const drawnComputers = shape.int(2, 3);
  const computerCount = options.computers ?? drawnComputers;
  const computers = Array.from(
    { length: computerCount },
    // With two boards, c1's `--server` list starts with board1, c2's with board2, c3's with board1.
    (_, i) => new ComputerMachine(`c${i + 1}`, `c${i + 1}`, `token-c${i + 1}`, world, shape.int(1, 2), i % boards.machines.length),
  );
  const twins: ComputerMachine[] = [];
  const machines = () => [...computers, ...twins];
  const laneCount = shape.int(2, small ? 3 : 4);
  const lanes = Array.from({ length: options.lanes ?? laneCount }, (_, i) => `lane-${i + 1}`);
  const windowMs = (small ? 3 : 6) * 60_000;
  const runCount = small ? shape.int(3, 6) : shape.int(6, 14);
  let runs: PlannedRun[] = Array.from({ length: runCount }, () => {
    const runId = shape.uuid();
    const lane = shape.pick(lanes);
    const behaviour = shape.pick(BEHAVIOURS);
    const ms = shape.int(200, 20_000);
    const submitAt = shape.int(0, windowMs * 0.7);
    const cancelAt = shape.chance(0.2) ? submitAt + shape.int(0, 30_000) : null;
    return { runId, lane, prompt: simPrompt(runId, lane, behaviour, ms), timeoutS: shape.int(30, 180), submitAt, cancelAt };
  });
  const drawn = runs.length;
  if (options.keepRuns) {
    const keep = new Set(options.keepRuns);
    runs = runs.filter((_, i) => keep.has(i));
  }
  const ids = computers.map((c) => c.id);
  const drawnPlan = drawPlan(
    planPrng,
    options.faults,
    ids,
    windowMs,
    boards.machines.map((b) => b.name),
  );
  const outage = options.maxOutageMs;
  const plan =
    options.plan ??
    (outage === undefined
      ? drawnPlan
      : drawnPlan.map((f) => (f.kind === 'unreachable' || f.kind === 'disk' ? { ...f, forMs: Math.min(f.forMs, outage) } : f)));
  const healAt = start + windowMs;
  // Every run ends within 16 virtual minutes of the faults' end, or of the last usage limit's reset
  // (a limited run waits for it, claimed, and runs its turn again then).
  const deadline = () => Math.max(healAt, invariants.lastResetAt) + 16 * 60_000;
  const history: Step[] = [];
  const client = new Owner('client');
  const faultOwner = new Owner('faults');
  let stepNo = 0;
  const note = (what: string) => history.push({ n: stepNo, at: scheduler.now - start, what });

  // Outside callers (a user submitting, cancelling) retry while the board cannot take them; of two boards,
  // each call goes to the next in turn (a load balancer's round robin), a retry to the next again.
  let turn = 0;
  const callBoard = (what: string, attempt: (life: BoardLife) => Promise<unknown>) => {
    const tryIt = () => {
      const life = boards.machines[turn++ % boards.machines.length]!.life;
      if (!life) return void scheduler.at(scheduler.now + 2_000, client, `retry ${what}`, tryIt);
      attempt(life).catch(() => scheduler.at(scheduler.now + 2_000, client, `retry ${what}`, tryIt));
    };
    tryIt();
  };
  for (const run of runs) {
    scheduler.at(start + run.submitAt, client, `submit ${run.runId.slice(0, 8)} (${run.lane})`, () =>
      callBoard(`submit ${run.runId.slice(0, 8)}`, (life) =>
        life.host.actor.input(
          boardInput.submitted({ runId: run.runId, lane: run.lane, prompt: run.prompt, agentId: null, timeoutS: run.timeoutS }, life.clock.now()),
          { failFast: true },
        ),
      ),
    );
    if (run.cancelAt !== null) {
      scheduler.at(start + run.cancelAt, client, `cancel ${run.runId.slice(0, 8)}`, () =>
        callBoard(`cancel ${run.runId.slice(0, 8)}`, async (life) => {
          const answer = await life.host.cancel(run.runId);
          // 404: not submitted yet (the submit is being retried): the user tries again.
          if (answer.status === 404) throw new Error('not yet');
        }),
      );
    }
  }

  const restart = (machine: ComputerMachine, afterMs: number) =>
    scheduler.at(scheduler.now + Math.max(1_000, afterMs), faultOwner, `restart ${machine.machine}`, () => {
      if (!machine.life) void machine.start().catch((e: Error) => say(`${machine.machine}: start failed: ${e.message}`));
    });
  const computerOf = (id: string) => computers.find((c) => c.id === id)!;
  const apply = (fault: Fault) => {
    note(`fault ${describeFault(fault)}`);
    const heal = (what: string, fn: () => void) => scheduler.at(scheduler.now + fault.forMs, faultOwner, `heal ${what}`, fn);
    switch (fault.kind) {
      case 'crash': {
        const machine = computerOf(fault.target);
        if (!machine.life) return;
        machine.crash();
        // Down for up to 135 s: long enough, at times, for the board to reap what it held.
        restart(machine, fault.forMs * 1.5);
        return;
      }
      case 'stop': {
        const machine = computerOf(fault.target);
        if (!machine.life || machine.life.draining) return;
        void machine.drain(30_000).then(() => restart(machine, 1_000));
        return;
      }
      case 'twin': {
        const original = computerOf(fault.target);
        const twin = new ComputerMachine(original.id, `${original.id}-twin${twins.length + 1}`, original.token, world, 1);
        twins.push(twin);
        // A twin shows up when the original's connection flaps (a cloned VM, a restarted container beside a live
        // one): the original's stream drops, its calls crawl for a while, and the twin gets in.
        original.cutStream();
        network.set(original.id, { slowMs: 2_000 });
        heal(`slow ${original.id}`, () => network.set(original.id, { slowMs: 0 }));
        void twin.start().catch((e: Error) => say(`${twin.machine}: start failed: ${e.message}`));
        heal(`${twin.machine}`, () => void twin.drain(10_000));
        return;
      }
      case 'skew':
        computerOf(fault.target).skewMs += fault.amount;
        return;
      case 'board': {
        // Of two boards, one dies with calls in flight (and streams, and hooks); the other goes on.
        const board = boards.named(fault.target);
        if (!board.life) return;
        board.crash();
        scheduler.at(scheduler.now + Math.max(1_000, fault.forMs / 10), faultOwner, `restart ${board.name}`, () => startBoard(board));
        return;
      }
      case 'split': {
        // A board cut off from every computer (its database still reachable): its streams break, computers fail over.
        const board = boards.named(fault.target);
        network.cutOff(board.name, true);
        for (const socket of board.sockets) socket.cut();
        heal(`split ${board.name}`, () => network.cutOff(board.name, false));
        return;
      }
      case 'lag': {
        // Of two boards, one hears the other's commits late: what it decides meanwhile is decided on a stale fold,
        // which its appends' guards must refuse (docs/rules.md#postgresql-board).
        const log = boards.log;
        if (!log.lag) return;
        log.lag(fault.target, fault.amount);
        heal(`lag ${fault.target}`, () => log.lag?.(fault.target, 0));
        return;
      }
      case 'net':
        // Lossy: the whole link crawls, loses and repeats; else only its HTTP calls crawl (an overloaded front end).
        if (fault.amount) network.set(fault.target, { loss: fault.amount / 100, slowMs: 2_000, dup: 0.2 });
        else network.set(fault.target, { callSlowMs: 3_000 });
        heal(`net ${fault.target}`, () => network.set(fault.target, { loss: 0, slowMs: 0, callSlowMs: 0, dup: 0 }));
        return;
      case 'cut':
        for (const machine of machines()) if (machine.id === fault.target) machine.cutStream();
        return;
      case 'unreachable':
        network.set(fault.target, { unreachable: true });
        heal(`unreachable ${fault.target}`, () => network.set(fault.target, { unreachable: false }));
        return;
      case 'disk': {
        const disk = fault.target === 'board' ? boards.log : computerOf(fault.target).disk;
        disk.full = true;
        invariants.diskFull(disk.name);
        heal(`disk ${disk.name}`, () => {
          disk.full = false;
          invariants.diskFull(disk.name);
        });
        return;
      }
    }
  };
  for (const fault of plan) scheduler.at(start + fault.at, faultOwner, `fault ${fault.kind} ${fault.target}`, () => apply(fault));

  // Once faults stop: links healthy, disks writable, every machine that is down started again.
  scheduler.at(healAt, faultOwner, 'faults stop', () => {
    for (const id of ids) network.set(id, { loss: 0, slowMs: 0, callSlowMs: 0, dup: 0, unreachable: false });
    if (boards.several) for (const board of boards.machines) network.cutOff(board.name, false);
    if (boards.several) for (const board of boards.machines) boards.log.lag?.(board.name, 0);
    for (const machine of [boards.log, ...machines().map((m) => m.disk)]) machine.full = false;
    for (const board of boards.machines) if (!board.life) startBoard(board);
    for (const machine of computers) if (!machine.life) restart(machine, 0);
    for (const twin of twins) if (twin.life) void twin.drain(10_000);
  });

  function startBoard(board: SimBoards['machines'][number]) {
    if (board.life) return;
    void board.start().catch((e: Error) => say(`${board.name}: start failed: ${e.message}`));
  }

  let violation: Violation | null = null;
  try {
    const first = (await boards.machines[0]!.start())!;
    for (const machine of computers) {
      await first.host.actor.input(boardInput.computerAdded(machine.id, hashToken(machine.token), first.clock.now()));
    }
    // Subscriptions whose notices the rounds file into session inboxes: every kind of every lane, and one lane's run ends.
    for (const subscription of SIM_SUBSCRIPTIONS(lanes[0]!)) await openSubscription(first.store, first.clock, subscription);
    // The other board starts on the log as the first left it.
    for (const board of boards.machines.slice(1)) await board.start();
    for (const machine of computers) void machine.start();
    await settle();
    // Settled runs leave the board's state (issue 16): their ends are read from the board's log.
    const allTerminal = (state: BoardState | null) => state !== null && runs.every((r) => invariants.settledOnBoard(r.runId));
    for (; stepNo < maxSteps; stepNo++) {
      const task = scheduler.take(deadline());
      if (!task) break;
      note(task.label);
      task.run();
      await settle();
      await boards.log.catchUp?.();
      violation = invariants.afterStep(machines(), stepNo, task.label);
      if (violation) break;
      // Not while the board is still starting (its start waits out a disk that was full): the world ends with it up.
      if (scheduler.now >= healAt && boards.machines.every((b) => b.life) && allTerminal(invariants.boardState) && !invariants.hookUnrecorded())
        break;
    }
    if (!violation && stepNo >= maxSteps && options.steps === undefined) violation = invariants.spun(stepNo, history.at(-1)?.what ?? '');
    if (!violation && stepNo < maxSteps)
      violation = invariants.liveness(
        runs.map((r) => r.runId),
        stepNo,
        machines(),
      );
    if (!violation) violation = await invariants.atEnd(machines(), stepNo);
  } finally {
    for (const machine of machines()) machine.crash();
    for (const board of boards.machines) board.crash();
    client.kill();
    faultOwner.kill();
    network.owner.kill();
    await boards.log.close?.();
  }
  const rows = options.keepRows || violation ? [boards.log, ...machines().map((m) => m.disk)].flatMap((disk) => invariants.rowsOf(disk)) : [];
  return {
    seed: options.seed,
    ok: violation === null,
    violation: violation && { ...violation, at: violation.at - start },
    steps: stepNo,
    virtualMs: scheduler.now - start,
    realMs: performance.now() - realStart,
    checks: invariants.counts,
    plan,
    history,
    runs: runs.length,
    drawnRuns: drawn,
    computers: computers.length,
    rows,
    log,
  };
}
