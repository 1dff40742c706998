/**
 * The hooks of two boards on one PostgreSQL log (docs/rules.md#the-log and docs/rules.md#postgresql-board): a hook is taken under the chores' lease
 * epoch (named in its take, checked in the take's transaction, board_leases of migration 0007), so when
 * its taker stops renewing the lease (dead, or paused), the board that takes the lease over records it
 * interrupted and runs nothing, though it cannot probe the taker's process; a taker that wakes, holding
 * the lease at a later epoch, gives up its hook's end rather than record it beside the interruption.
 * Real time, a short board lease (the boards renew every 375 ms): short enough to keep the test quick, and
 * long enough that a loaded machine does not pass the lease to B before the test stops A.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningChores, startBoardChores } from '../../../apps/board/chores/boardChores.ts';
import type { HookOutcome } from '../../../apps/board/chores/hooks/hookCommand.ts';
import { HOOKS_STREAM, type RunHook } from '../../../apps/board/chores/hooks/hookRunner.ts';
import { choresOn } from '../../../apps/board/peers/leasedStore.ts';
import { PostgresPeers } from '../../../apps/board/peers/postgresPeers.ts';
import { systemClock } from '../../../runtime/actors/clock.ts';
import { openPostgresStore, type PostgresEventStore } from '../../../runtime/store/postgres/postgresEventStore.ts';
import { appendRun } from '../../fixtures/hooks/boardLog.ts';
import { freshPostgresLog } from '../../support/postgresLog.ts';

const LEASE_MS = 1_500;
const HOOKS = { on_run_ended: 'notify-ended' };
const EXITED: HookOutcome = { ok: true, exitCode: 0, signal: null, error: null, outputTail: '', durationMs: 5 };
const opened: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const c of opened.splice(0).reverse()) await c.close();
});

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !(await check()); ) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface Board {
  readonly store: PostgresEventStore;
  readonly peers: PostgresPeers;
  readonly chores: RunningChores;
  readonly started: number[];
  readonly lines: string[];
  exit(effect: number): void;
}

let boards = 0;

/** A board process of its own writer (`test#boardN:pid`: a host this one cannot probe), running the board's chores on the lease. */
async function board(url: string): Promise<Board> {
  const store = await openPostgresStore(url, { writer: `test#board${++boards}:${process.pid}` });
  opened.push(store);
  const lines: string[] = [];
  const log = (line: string) => void lines.push(line);
  const peers = new PostgresPeers(store, { clock: systemClock, leaseMs: LEASE_MS, log });
  const started: number[] = [];
  const ends = new Map<number, (outcome: HookOutcome) => void>();
  const runHook: RunHook = (_command, _payload, _options, effect) => {
    started.push(effect);
    return new Promise((resolve) => ends.set(effect, resolve));
  };
  await peers.start({ computers: () => [], round: async () => undefined });
  const chores = await startBoardChores({ ...choresOn(store, peers), clock: systemClock, hooks: HOOKS, runHook, log }, 10_000);
  opened.push({ close: () => Promise.race([chores.stop(0), new Promise((resolve) => setTimeout(resolve, 200))]) });
  opened.push({ close: () => peers.stop() });
  return { store, peers, chores, started, lines, exit: (effect) => ends.get(effect)!(EXITED) };
}

const settling = async (store: PostgresEventStore, effect: number) =>
  (await store.readStream(HOOKS_STREAM)).filter((e) => (e.data as { effect?: number }).effect === effect);

describe('hooks of two boards on one PostgreSQL log', () => {
  it('given holder A took a hook and stopped renewing while it ran, when B takes the lease over, then B records it interrupted once and runs nothing; A, awake at a later epoch, records no end beside it', async () => {
    const url = await freshPostgresLog();
    const a = await board(url);
    expect(a.peers.holdsChores()).toBe(true);
    const b = await board(url);
    const { finished } = await appendRun(a.store, 'r1', 'L');
    await until("A's hook to start", () => a.started.length === 1);
    const [take] = (await a.store.readStream(HOOKS_STREAM)).filter((e) => e.type === 'outbox.taken' && e.data.effects.includes(finished));
    expect(take?.type === 'outbox.taken' && take.data.epoch).toBe(a.peers.choreLease().epoch);

    // A stops renewing (frozen, or dead): B holds the lease within one, and settles A's take.
    await a.peers.stop();
    await until('B to record the hook interrupted', async () => (await settling(b.store, finished)).length > 0);
    const [interrupted] = await settling(b.store, finished);
    expect(interrupted).toMatchObject({ type: 'hook.interrupted', actor: b.store.writer });
    expect(b.started).toEqual([]);

    // A wakes; B dies: A holds the lease again, at a later epoch than its take's, and then its hook exits.
    await a.peers.start({ computers: () => [], round: async () => undefined });
    await b.peers.stop();
    await until('A to hold the lease again', () => a.peers.holdsChores());
    expect(a.peers.choreLease().epoch).toBeGreaterThan(take!.type === 'outbox.taken' ? take!.data.epoch! : 0);
    a.exit(finished);
    await until('A to give its hook’s end up', () => a.lines.some((line) => line.includes(`effect of seq ${finished} is not recorded`)));
    expect((await settling(a.store, finished)).map((e) => e.type)).toEqual(['hook.interrupted']);
    expect([...a.started, ...b.started]).toEqual([finished]);
  });
});
