/**
 * The boards of one PostgreSQL log (docs/rules.md#postgresql-board, migration 0007), two stores of one log standing for two
 * board processes: the chores' lease is checked in the append's own transaction, so a holder that was
 * paused past its lease (or lost it to the other board) commits no chore; heartbeats heard by one board
 * are read by the other; a computer is orphaned once no live board says it holds it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresPeers } from '../../../apps/board/peers/postgresPeers.ts';
import { type Clock, systemClock } from '../../../runtime/actors/clock.ts';
import type { AppendLease } from '../../../runtime/store/eventStore.ts';
import { openPostgresStore, type PostgresEventStore } from '../../../runtime/store/postgres/postgresEventStore.ts';
import { counterCodec } from '../../fixtures/counter/counterEvents.ts';
import { bumped } from '../../support/events.ts';
import { freshPostgresLog } from '../../support/postgresLog.ts';

const LEASE_MS = 300;
/** How far apart two boards' readings of one moment may be once compared through the database's clock. */
const CLOCKS_COMPARED_MS = 2_000;
const opened: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const c of opened.splice(0).reverse()) await c.close();
});

let boards = 0;

/** A board's store and peers: a writer of its own (in one process, two stores would share the process's). */
async function board(url: string, clock: Clock = systemClock, leaseMs = LEASE_MS): Promise<{ store: PostgresEventStore; peers: PostgresPeers }> {
  const store = await openPostgresStore(url, { codec: counterCodec, writer: `test#board${++boards}:${process.pid}` });
  opened.push(store);
  const peers = new PostgresPeers(store, { clock, leaseMs, log: () => undefined });
  opened.push({ close: () => peers.stop() });
  return { store, peers };
}

const rounds = { computers: () => [], round: async () => undefined };

async function until(what: string, done: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const chore = (store: PostgresEventStore, lease: AppendLease, total: number) =>
  store.append({ expected: { 'counter:c': 'any' }, events: [bumped('counter:c', total)], lease });

describe('the chores’ lease of the boards of one PostgreSQL log', () => {
  it('given a holder paused past its lease and taken over, when it appends a chore with its old epoch, then its transaction refuses it and writes nothing; the new holder’s goes through', async () => {
    const url = await freshPostgresLog();
    const a = await board(url);
    const b = await board(url);
    await a.peers.start(rounds);
    expect(a.peers.holdsChores()).toBe(true);
    const paused = a.peers.choreLease();
    expect((await chore(a.store, paused, 1)).ok).toBe(true);
    // A stops renewing (a pause, a frozen VM): B takes the lease once it has expired.
    await a.peers.stop();
    await b.peers.start(rounds);
    await until('B to take the lease over', () => b.peers.holdsChores());
    expect(b.peers.choreLease().epoch).toBe(paused.epoch + 1);

    const late = await chore(a.store, paused, 2);
    expect(late.ok).toBe(false);
    if (late.ok) return;
    expect(late.conflict.leaseLost).toBe(true);
    expect(late.conflict.message).toContain(`held by ${b.peers.identity} at epoch ${paused.epoch + 1}`);
    expect((await chore(b.store, b.peers.choreLease(), 3)).ok).toBe(true);
    expect((await a.store.readStream('counter:c')).map((e) => e.data)).toEqual([{ total: 1 }, { total: 3 }]);
  });

  it('given a holder whose lease expired with nobody taking it, when it appends a chore, then it is refused as expired; renewed, the same epoch goes through', async () => {
    const url = await freshPostgresLog();
    const a = await board(url);
    await a.peers.start(rounds);
    const lease = a.peers.choreLease();
    await a.peers.stop();
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 50));
    const late = await chore(a.store, lease, 1);
    expect(late.ok || late.conflict.message).toContain('expired before this append');
    // Not a holder as far as it knows either: what it would carry is no epoch at all.
    expect(a.peers.choreLease().epoch).toBe(0);
    const again = await board(url);
    await again.peers.start(rounds);
    expect((await chore(again.store, again.peers.choreLease(), 2)).ok).toBe(true);
  });

  it('given a heartbeat heard by one board, when the other reaps, then it reads it; a row of a run no longer open is forgotten after a lease', async () => {
    const url = await freshPostgresLog();
    // A lease far longer than the test's steps take on a loaded machine: r1 must still be within it at
    // the end (with 300 ms, a slow write and two reads once outlasted it, and r1 was forgotten too).
    const lease = 10_000;
    const a = await board(url, systemClock, lease);
    const b = await board(url, systemClock, lease);
    const now = Date.now();
    a.peers.heard('r1', now);
    a.peers.heard('r2', now - 10 * lease);
    await until('the heartbeats to be written', async () => (await b.peers.lastHeard(['r1', 'r2'])).size === 2);
    // Read in b's clock through the database's: as exact as the two clocks' comparison (a round trip).
    const heard = await b.peers.lastHeard(['r1', 'r2']);
    expect([...heard.keys()].sort()).toEqual(['r1', 'r2']);
    expect(Math.abs(heard.get('r1')! - now)).toBeLessThan(CLOCKS_COMPARED_MS);
    expect(Math.abs(heard.get('r2')! - (now - 10 * lease))).toBeLessThan(CLOCKS_COMPARED_MS);
    // r2 ended long ago: forgotten; r1 is kept a lease (its claim may not be folded yet).
    await b.peers.lastHeard([]);
    expect([...(await b.peers.lastHeard(['r1', 'r2'])).keys()]).toEqual(['r1']);
  });

  it('given two boards whose clocks are two minutes apart, when one hears a heartbeat, then the other reads it as just heard in its own clock, and keeps its row', async () => {
    // The reaper compares a heartbeat with its own clock: read in the hearing board's clock, a run heard
    // on a board two minutes behind would look two minutes silent, and be reaped while it runs.
    const url = await freshPostgresLog();
    const behind: Clock = { now: () => Date.now() - 120_000, after: systemClock.after };
    const ahead: Clock = { now: () => Date.now() + 120_000, after: systemClock.after };
    const hearer = await board(url, behind);
    const reaper = await board(url, ahead);
    hearer.peers.heard('r1', behind.now());
    await until('the heartbeat to be written', async () => (await reaper.peers.lastHeard(['r1'])).size === 1);
    const last = (await reaper.peers.lastHeard(['r1'])).get('r1')!;
    expect(Math.abs(ahead.now() - last)).toBeLessThan(CLOCKS_COMPARED_MS + 1_000);
    // Not a run that ended a lease ago in the reaper's clock: its row stays (its claim may not be folded yet).
    await reaper.peers.lastHeard([]);
    expect([...(await reaper.peers.lastHeard(['r1'])).keys()]).toEqual(['r1']);
  });

  it('given a computer held by a live board, when the holder asks for orphans, then only computers no live board holds are; a silent board’s are, one lease on', async () => {
    const url = await freshPostgresLog();
    const a = await board(url);
    const b = await board(url);
    await a.peers.holding(['c1']);
    expect(await b.peers.orphans(['c1', 'c2'])).toEqual(['c2']);
    await until('a’s row to be a lease old', async () => (await b.peers.orphans(['c1', 'c2'])).length === 2);
    // A board that stops says so: its computers are orphaned at once.
    await a.peers.holding(['c1']);
    await a.peers.stop();
    expect(await b.peers.orphans(['c1'])).toEqual(['c1']);
  });
});
