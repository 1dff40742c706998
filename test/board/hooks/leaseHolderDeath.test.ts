/**
 * A hook taken by the holder of the chores' lease (docs/rules.md#postgresql-board), on a log several boards share, whose holder
 * dies or pauses while the hook is due (docs/rules.md#the-log: at most once; one cut is recorded interrupted, never run
 * again). The taker is on another host, so no process probe can say it is gone: the lease's epoch does.
 * A take is made under an epoch and its hook started and its end recorded only under that same epoch, so
 * a holder of a later epoch records every take of an earlier one that nothing settled as interrupted, and
 * a taker that wakes after that neither starts its hook nor records its end. Each board here runs the
 * board's own chores (startBoardChores on LeasedPeers, the shared log's lease checked in each append's
 * transaction) on a fake clock of its own: a board whose clock is not moved is frozen (dead, or paused
 * until it is moved again), and the database's clock is the latest of them.
 */
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type RunningChores, startBoardChores } from '../../../apps/board/chores/boardChores.ts';
import type { HookOutcome } from '../../../apps/board/chores/hooks/hookCommand.ts';
import { HOOKS_STREAM, type RunHook } from '../../../apps/board/chores/hooks/hookRunner.ts';
import { LeasedPeers } from '../../../apps/board/peers/leasedPeers.ts';
import { choresOn } from '../../../apps/board/peers/leasedStore.ts';
import { describeEvent } from '../../../projections/audit/describeEvent.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';
import type { EventStore } from '../../../runtime/store/eventStore.ts';
import { SqliteEventStore } from '../../../runtime/store/sqlite/sqliteEventStore.ts';
import { emptyLog, withoutHolds } from '../../../sim/disk.ts';
import { SimPeerTables } from '../../../sim/peerTables.ts';
import { appendRun } from '../../fixtures/hooks/boardLog.ts';

/** The board lease: a renewal every second, holding three. */
const LEASE_MS = 4_000;
const HOOKS = { on_run_ended: 'notify-ended' };
const EXITED: HookOutcome = { ok: true, exitCode: 0, signal: null, error: null, outputTail: '', durationMs: 5 };

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  for (const deadline = Date.now() + ms; !(await check()); ) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

interface Board {
  readonly clock: FakeClock;
  readonly store: EventStore;
  readonly peers: LeasedPeers;
  readonly chores: RunningChores;
  /** The effects (seqs) whose hook this board life started. */
  readonly started: number[];
  /** Ends the hook of `effect` this life started, as its command exits. */
  exit(effect: number): void;
  /**
   * Lets this life's reads of a run's stream (what a hook's payload reads, the last thing awaited before
   * its start) wait until `resume`; `returned` says once one read so held has returned.
   */
  pauseReads(): { resume(): void; returned(): boolean };
}

/** Two or more board lives on one shared log (PostgreSQL's tables as the simulator keeps them). */
async function sharedLog() {
  const db = new Database(await emptyLog());
  const clocks: FakeClock[] = [];
  const dbNow = () => Math.max(...clocks.map((c) => c.now()));
  clocks.push(new FakeClock());
  const tables = new SimPeerTables(db, dbNow);
  const lives: Board[] = [];
  onTestFinished(async () => {
    for (const life of lives) await Promise.race([life.chores.stop(0), new Promise((resolve) => setTimeout(resolve, 100))]);
  });

  /** A board life: `host` writes as `host:1` (a container's pid 1, restarted as the same), its identity its own. */
  const board = async (host: string, life: number): Promise<Board> => {
    const clock = new FakeClock(dbNow());
    clocks.push(clock);
    // Unheld (sim/disk.ts): a held batch waits on real time, which would decide when a frozen board's appends commit.
    const store = withoutHolds(new SqliteEventStore(db, { writer: `${host}:1`, checkGuards: true, leases: tables.leases, pollMs: 2 ** 31 - 1 }));
    const peers = new LeasedPeers(
      tables.connection(() => null),
      `${host}:1#${life}`,
      {
        clock,
        leaseMs: LEASE_MS,
        log: () => undefined,
        monotonic: () => clock.now(),
      },
    );
    const started: number[] = [];
    const ends = new Map<number, (outcome: HookOutcome) => void>();
    const runHook: RunHook = (_command, _payload, _options, effect) => {
      started.push(effect);
      return new Promise((resolve) => ends.set(effect, resolve));
    };
    let gate: Promise<void> | null = null;
    let heldReturned = 0;
    const reading: EventStore = new Proxy(store, {
      get(target, property) {
        if (property === 'readStream')
          return async (...args: Parameters<EventStore['readStream']>) => {
            const held = gate !== null && args[0].startsWith('run:');
            if (held) await gate;
            const events = await target.readStream(...args);
            if (held) heldReturned++;
            return events;
          };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await peers.start({ computers: () => [], round: async () => undefined });
    const chores = await startBoardChores({ ...choresOn(reading, peers), clock, hooks: HOOKS, runHook, log: () => undefined }, 10_000);
    const made: Board = {
      clock,
      store,
      peers,
      chores,
      started,
      exit: (effect) => ends.get(effect)!(EXITED),
      pauseReads: () => {
        let resume: () => void = () => undefined;
        gate = new Promise<void>((resolve) => {
          resume = resolve;
        });
        return { resume: () => resume(), returned: () => heldReturned > 0 };
      },
    };
    lives.push(made);
    return made;
  };

  /**
   * Moves the clocks of `running` on together by `ms` (each to the database's clock first: a frozen board
   * wakes at the present), letting their work run between steps; the others stay frozen.
   */
  const run = async (running: Board | Board[], ms: number) => {
    const moving = [running].flat();
    const now = dbNow();
    for (const life of moving) life.clock.advance(Math.max(0, now - life.clock.now()));
    for (let moved = 0; moved < ms; moved += 100) {
      for (const life of moving) life.clock.advance(100);
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    }
  };

  const hooksStream = async () => (await new SqliteEventStore(db, { pollMs: 2 ** 31 - 1 }).readStream(HOOKS_STREAM)).map((e) => ({ ...e }));
  return { db, board, run, hooksStream };
}

/** The records that settle `effect` in the hooks' stream. */
const settling = (stream: readonly { type: string; data: unknown }[], effect: number) =>
  stream.filter((e) => (e.data as { effect?: number }).effect === effect).map((e) => e.type);

/**
 * Holder A takes a hook and starts it, then freezes (its clock stops: dead, or paused); B's renewals take
 * the lease once A's has expired, and B's chores settle A's take.
 */
async function takenThenTakenOver() {
  const log = await sharedLog();
  const a = await log.board('a-host', 1);
  const b = await log.board('b-host', 2);
  expect(a.peers.holdsChores()).toBe(true);
  expect(b.peers.holdsChores()).toBe(false);
  const { finished } = await appendRun(a.store, 'r1', 'L');
  await until("A's hook to start", () => a.started.length === 1);
  expect(a.started).toEqual([finished]);
  await log.run(b, LEASE_MS * 2);
  expect(b.peers.holdsChores()).toBe(true);
  await until('B to record the hook interrupted', async () => settling(await log.hooksStream(), finished).length > 0);
  return { log, a, b, finished };
}

describe("a hook whose taker, the chores' lease holder, dies or pauses (docs/rules.md#the-log and docs/rules.md#postgresql-board)", () => {
  it('given holder A took a hook and died while it ran, when B takes the lease over, then B records it interrupted once and never runs it; a restarted A does not run it either', async () => {
    // A dies: its clock never moves again.
    const { log, b, finished } = await takenThenTakenOver();
    const stream = await log.hooksStream();
    expect(settling(stream, finished)).toEqual(['hook.interrupted']);
    expect(stream.find((e) => e.type === 'hook.interrupted')!.actor).toBe('b-host:1');
    // The take names the epoch it was made under, and the audit says so.
    const take = stream.find((e) => e.type === 'outbox.taken' && e.data.effects.includes(finished))!;
    expect(describeEvent(take)).toMatch(/^the outbox took 1 effect \(through seq \d+, under the chores' lease epoch 1\)$/);
    expect(b.started).toEqual([]);

    // B dies too; A restarts (the same host:pid, a new life) and takes the lease: settled already, not run again.
    const again = await log.board('a-host', 3);
    await log.run(again, LEASE_MS * 2);
    expect(again.peers.holdsChores()).toBe(true);
    expect(settling(await log.hooksStream(), finished)).toEqual(['hook.interrupted']);
    expect(again.started).toEqual([]);
  });

  it('given holder A paused while its hook ran and B took the lease over, when A wakes and its hook exits, then its end is not recorded: the hook is settled once, as interrupted by B', async () => {
    const { log, a, b, finished } = await takenThenTakenOver();
    // A wakes beside B: its renewals find B holding the lease, and its hook exits.
    await log.run([a, b], LEASE_MS);
    expect(a.peers.holdsChores()).toBe(false);
    a.exit(finished);
    await log.run([a, b], LEASE_MS);
    expect(settling(await log.hooksStream(), finished)).toEqual(['hook.interrupted']);
    expect([...a.started, ...b.started]).toEqual([finished]);
  });

  it('given holder A paused while its hook ran, B took the lease over and died, when A wakes, holds the lease again (a later epoch) and its hook exits, then its end is not recorded beside B’s interruption', async () => {
    const { log, a, b, finished } = await takenThenTakenOver();
    // B dies (its clock stops); A wakes and takes the lease once B's has expired: an epoch of its own again.
    await log.run(a, LEASE_MS * 2);
    expect(a.peers.choreLease().epoch).toBe(3);
    a.exit(finished);
    await log.run(a, LEASE_MS);
    expect(settling(await log.hooksStream(), finished)).toEqual(['hook.interrupted']);
    expect([...a.started, ...b.started]).toEqual([finished]);
  });

  it('given holder A paused between its take and its hook’s start, when it wakes after B recorded the hook interrupted, then A never starts it, and nothing more is recorded', async () => {
    const log = await sharedLog();
    const a = await log.board('a-host', 1);
    const b = await log.board('b-host', 2);
    const paused = a.pauseReads();
    const { finished } = await appendRun(a.store, 'r1', 'L');
    await until("A's take to commit", async () =>
      (await log.hooksStream()).some((e) => e.type === 'outbox.taken' && e.data.effects.includes(finished)),
    );
    expect(a.started).toEqual([]);

    await log.run(b, LEASE_MS * 2);
    await until('B to record the hook interrupted', async () => settling(await log.hooksStream(), finished).length > 0);

    // A wakes where it stopped, just before the hook's start: its clock has jumped to the present.
    await log.run([a, b], 0);
    paused.resume();
    await until("A's read before the start to return", () => paused.returned());
    await log.run([a, b], LEASE_MS * 2);
    expect(a.started).toEqual([]);
    expect(b.started).toEqual([]);
    expect(settling(await log.hooksStream(), finished)).toEqual(['hook.interrupted']);
  });

  it('given holder A whose lease lapsed while its hook ran and nobody took it, when A holds it again (the same epoch), then the hook’s exit is recorded, not lost', async () => {
    const log = await sharedLog();
    const a = await log.board('a-host', 1);
    const { finished } = await appendRun(a.store, 'r1', 'L');
    await until("A's hook to start", () => a.started.length === 1);
    const epoch = a.peers.choreLease().epoch;
    // Frozen past its lease, but nobody else took it: A's exit comes while it does not hold it.
    a.clock.advance(LEASE_MS);
    expect(a.peers.holdsChores()).toBe(false);
    a.exit(finished);
    await log.run(a, LEASE_MS);
    expect(a.peers.choreLease().epoch).toBe(epoch);
    await until('the exit to be recorded', async () => settling(await log.hooksStream(), finished).length > 0);
    expect(settling(await log.hooksStream(), finished)).toEqual(['hook.exited']);
  });
});
