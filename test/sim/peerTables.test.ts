/**
 * The simulator's shared log keeps PostgreSQL's peer tables (sim/peerTables.ts) and checks the chores'
 * lease inside its SQLite write transaction, as pgAppend does (one rule: planAppends): a holder whose
 * lease was taken over, or expired on the database's clock, commits no chore; heartbeats heard by one
 * board are read by the other; a computer is orphaned once no live board's row holds it. Virtual time.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LeasedPeers } from '../../apps/board/peers/leasedPeers.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import type { AppendLease } from '../../runtime/store/eventStore.ts';
import { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { emptyLog } from '../../sim/disk.ts';
import { SimPeerTables } from '../../sim/peerTables.ts';
import { counterCodec } from '../fixtures/counter/counterEvents.ts';
import { bumped } from '../support/events.ts';

const LEASE_MS = 1_000;
const rounds = { computers: () => ['c1'], round: async () => undefined };

async function world() {
  const time = { now: 1_000_000 };
  const db = new Database(await emptyLog());
  const tables = new SimPeerTables(db, () => time.now);
  // Renewals only when the test says (no timer): each `start` is one renewal.
  const clock: Clock = { now: () => time.now, after: () => () => undefined };
  const board = (name: string) => {
    const store = new SqliteEventStore(db, {
      codec: counterCodec,
      writer: `${name}-host:1`,
      checkGuards: true,
      leases: tables.leases,
      pollMs: 2 ** 31 - 1,
    });
    const peers = new LeasedPeers(
      tables.connection(() => null),
      `${name}#1`,
      { clock, leaseMs: LEASE_MS, log: () => undefined, monotonic: () => time.now },
    );
    return { store, peers };
  };
  return { time, a: board('a'), b: board('b') };
}

const chore = (store: SqliteEventStore, lease: AppendLease, total: number) =>
  store.append({ expected: { 'counter:c': 'any' }, events: [bumped('counter:c', total)], lease });

describe('the shared log of the simulator’s boards', () => {
  it('given a holder silent past its lease and taken over, when it appends a chore with its old epoch, then the transaction refuses it; the new holder’s goes through', async () => {
    const { time, a, b } = await world();
    await a.peers.start(rounds);
    const paused = a.peers.choreLease();
    expect(paused.epoch).toBe(1);
    expect((await chore(a.store, paused, 1)).ok).toBe(true);
    await b.peers.start(rounds);
    expect(b.peers.holdsChores()).toBe(false);
    time.now += LEASE_MS;
    await b.peers.start(rounds);
    expect(b.peers.choreLease().epoch).toBe(2);
    const late = await chore(a.store, paused, 2);
    expect(late.ok || late.conflict.leaseLost).toBe(true);
    expect(late.ok || late.conflict.message).toContain('held by b#1 at epoch 2');
    expect((await chore(b.store, b.peers.choreLease(), 3)).ok).toBe(true);
    expect((await a.store.readStream('counter:c')).map((e) => e.data)).toEqual([{ total: 1 }, { total: 3 }]);
  });

  it('given a holder whose lease expired with nobody taking it, then its chore is refused as expired, and what it carries is no epoch', async () => {
    const { time, a } = await world();
    await a.peers.start(rounds);
    const lease = a.peers.choreLease();
    time.now += LEASE_MS;
    const late = await chore(a.store, lease, 1);
    expect(late.ok || late.conflict.message).toContain('expired before this append');
    expect(a.peers.holdsChores()).toBe(false);
    expect(a.peers.choreLease().epoch).toBe(0);
  });

  it('given heartbeats heard by one board and its liveness row, then the other reads them, and orphans only once that row is stale', async () => {
    const { time, a, b } = await world();
    await a.peers.start(rounds);
    a.peers.heard('run-1', time.now);
    expect(await b.peers.lastHeard(['run-1'])).toEqual(new Map([['run-1', time.now]]));
    expect(await b.peers.orphans(['c1', 'c2'])).toEqual(['c2']);
    time.now += LEASE_MS;
    expect(await b.peers.orphans(['c1', 'c2'])).toEqual(['c1', 'c2']);
  });
});
