import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { AdoptionState } from '../../../actors/board/adoption/adoptionState.ts';
import { releaseAdoption, requestAdoption } from '../../../apps/board/chores/adoptions/adoptionRequests.ts';
import { type AdoptionBinder, completeAdoptions, type SessionListing } from '../../../apps/board/chores/adoptions/adoptionRound.ts';
import { logSessionListing } from '../../../apps/board/chores/adoptions/sessionListing.ts';
import { adoptionsProjection } from '../../../projections/adoptions.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';
import { isProcessAlive } from '../../../runtime/actors/processes.ts';
import { hydrateProjections } from '../../../runtime/folds/hydrate.ts';
import type { EventStore } from '../../../runtime/store/eventStore.ts';
import { announceSession } from '../../fixtures/hooks/boardLog.ts';
import { openTempStore, tempDbPath } from '../../support/tempStore.ts';

const lanes = async (store: EventStore) =>
  (await hydrateProjections(store, [adoptionsProjection])).get(adoptionsProjection.name)!.state as Record<string, AdoptionState>;
const listed = (where: Record<string, string>): SessionListing => ({ find: async (sessionId) => where[sessionId] ?? null });
const types = async (store: EventStore, lane: string) => (await store.readStream(`lane:${lane}`)).map((e) => e.type);

/** A binder that counts its binds, taking a few turns of the event loop as an outside write would. */
function countingBinder(fail: string | null = null) {
  const binds: string[] = [];
  const binder: AdoptionBinder = {
    async bind({ lane, sessionId, computerId }) {
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      binds.push(`${lane}=${sessionId}@${computerId}`);
      if (fail) throw new Error(fail);
    },
  };
  return { binder, binds };
}

describe('adoption rounds on a real log', () => {
  it('given a request for a listed session, when a round runs, then it claims, binds once, and the lane adopts the session', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    await announceSession(store, 'c7', 'r1', 'S1');
    await requestAdoption(store, clock, 'L', 'S1');
    const { binder, binds } = countingBinder();

    const report = await completeAdoptions({ store, clock, listing: logSessionListing(store), binder }, await lanes(store));
    expect(report.adopted).toEqual([['L', 'S1']]);
    expect(binds).toEqual(['L=S1@c7']);
    expect(await types(store, 'L')).toEqual([
      'adoption.requested',
      'adoption.listing.read',
      'adoption.claimed',
      'adoption.bind.ended',
      'adoption.adopted',
    ]);
    const claimed = (await store.readStream('lane:L'))[2]!;
    expect(claimed.data).toMatchObject({ lock: store.writer, expires: clock.now() + 15 * 60_000, computerId: 'c7' });

    // Answered: a second round acts on nothing.
    expect(await completeAdoptions({ store, clock, listing: logSessionListing(store), binder }, await lanes(store))).toEqual({
      adopted: [],
      failed: [],
      waiting: [],
      skipped: [],
    });
    expect(binds).toHaveLength(1);
  });

  it("given one request, when two processes' rounds race on one file, then exactly one claims and binds it; the other leaves it", async () => {
    const path = tempDbPath();
    const stores = [await openTempStore(path), await openTempStore(path, { writer: `${hostname()}:${process.ppid}` })];
    const clock = new FakeClock();
    for (let lane = 0; lane < 20; lane++) await requestAdoption(stores[0]!, clock, `L${lane}`, `S${lane}`);
    const where = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`S${i}`, 'c1']));
    const counted = countingBinder();

    const index = await lanes(stores[0]!);
    const reports = await Promise.all(
      stores.map((store) => completeAdoptions({ store, clock, listing: listed(where), binder: counted.binder }, index)),
    );

    expect(counted.binds.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `L${i}=S${i}@c1`).sort());
    expect(reports.flatMap((r) => r.adopted).length).toBe(20);
    for (let lane = 0; lane < 20; lane++) {
      const events = await stores[0]!.readStream(`lane:L${lane}`);
      expect(events.filter((e) => e.type === 'adoption.claimed')).toHaveLength(1);
      expect(events.filter((e) => e.type === 'adoption.adopted')).toHaveLength(1);
    }
  });

  it('given a request claimed by a process that died, when a round runs, then the request is open again: claimed anew and bound', async () => {
    const path = tempDbPath();
    const store = await openTempStore(path);
    const clock = new FakeClock();
    await requestAdoption(store, clock, 'L', 'S1');
    const dead = await openTempStore(path, { writer: `${hostname()}:999999` });
    expect(isProcessAlive(999999)).toBe(false);
    // The dead process claimed it and died before its bind ended.
    const diesMidBind: AdoptionBinder = { bind: () => new Promise(() => {}) };
    void completeAdoptions({ store: dead, clock, listing: listed({ S1: 'c1' }), binder: diesMidBind }, await lanes(store));
    for (let i = 0; i < 20 && !(await types(store, 'L')).includes('adoption.claimed'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await types(store, 'L')).toEqual(['adoption.requested', 'adoption.listing.read', 'adoption.claimed']);

    // A live process's claim holds; this one's process is gone.
    const { binder, binds } = countingBinder();
    const report = await completeAdoptions({ store, clock, listing: listed({ S1: 'c1' }), binder }, await lanes(store));
    expect(report.adopted).toEqual([['L', 'S1']]);
    expect(binds).toEqual(['L=S1@c1']);
    const claims = (await store.readStream('lane:L'))
      .filter((e) => e.type === 'adoption.claimed')
      .map((e) => e.type === 'adoption.claimed' && e.data.lock);
    expect(claims).toEqual([`${hostname()}:999999`, store.writer]);
  });

  it('given a request whose session is not listed, when rounds run, then it waits (said once) and fails after 180 s with the reason', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    await requestAdoption(store, clock, 'L', 'S1');
    const { binder, binds } = countingBinder();
    const round = async () => completeAdoptions({ store, clock, listing: listed({}), binder }, await lanes(store));

    expect((await round()).waiting).toEqual([['L', 'session S1 is not listed on any computer: it waits up to 180 s from the request']]);
    clock.advance(170_000);
    expect((await round()).waiting).toEqual([]);
    clock.advance(10_000);
    expect((await round()).failed).toEqual([['L', 'session S1 is not listed on any computer, 180 s after the request']]);
    expect(binds).toEqual([]);
    expect(await types(store, 'L')).toEqual([
      'adoption.requested',
      'adoption.listing.read',
      'adoption.waiting',
      'adoption.listing.read',
      'adoption.failed',
    ]);
  });

  it("given a failing bind, when a round runs, then the request fails with the bind's reason; a released request is not acted on", async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    await requestAdoption(store, clock, 'L', 'S1');
    await requestAdoption(store, clock, 'M', 'S2');
    await releaseAdoption(store, clock, 'M', 'changed my mind');
    const { binder, binds } = countingBinder('tmux: no such pane');

    const report = await completeAdoptions({ store, clock, listing: listed({ S1: 'c1', S2: 'c1' }), binder }, await lanes(store));
    expect(report.failed).toEqual([['L', 'the bind failed: tmux: no such pane']]);
    expect(binds).toEqual(['L=S1@c1']);
    expect(await types(store, 'M')).toEqual(['adoption.requested', 'adoption.released']);
    await expect(releaseAdoption(store, clock, 'M', 'again')).rejects.toThrow('lane M has no open adoption request to release');
  });
});
