/**
 * The board's copy of its computers' events (ComputerEvents), on both board dialects: each (computer,
 * seq) kept once however often it is sent, `through` never going back, a run's stream bounded per
 * computer (what is over is counted as held, so it is not sent again), lanes kept whole, and the
 * reads a run's readers make (its entity with the lane decisions that name it, ids by prefix, and the
 * whole copy in the order kept) answer the same on both.
 */
import { describe, expect, it } from 'vitest';
import { type ComputerEvents, REPORT_LIMITS, type ReportedRow } from '../../runtime/store/computerEvents.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { postgresComputerEvents } from '../../runtime/store/postgres/pgComputerEvents.ts';
import { PostgresEventStore } from '../../runtime/store/postgres/postgresEventStore.ts';
import { sqliteComputerEvents } from '../../runtime/store/sqlite/computerEventsTable.ts';
import { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { freshStore, storeKinds } from '../support/storeKinds.ts';

const RUN = 'r-1';

function copyOf(store: EventStore): ComputerEvents {
  if (store instanceof SqliteEventStore) return sqliteComputerEvents(store.db)!;
  if (store instanceof PostgresEventStore) return postgresComputerEvents(store);
  throw new Error('no such store');
}

const queued = (seq: number, runId = RUN): ReportedRow => ({
  seq,
  stream: 'c1/lane:talk',
  version: seq,
  type: 'run.queued',
  data: { runId, lane: 'talk', agentId: null, arrival: seq },
  at: 1_000 + seq,
  cause: null,
  actor: 'c1-host:1',
});

const announced = (seq: number, version: number): ReportedRow => ({
  seq,
  stream: `c1/run:${RUN}`,
  version,
  type: 'run.session.announced',
  data: { runId: RUN, sessionId: `s-${seq}` },
  at: 1_000 + seq,
  cause: null,
  actor: 'c1-host:1',
});

describe.each(storeKinds)('the computers’ reported events on $name', (kind) => {
  it('keeps each computer’s seq once, answers how far it has them, and reads them by entity, prefix and order', async () => {
    const { store } = await freshStore(kind);
    const copy = copyOf(store);
    expect(await copy.record('c1', [queued(1), queued(2, 'r-2')])).toBe(2);
    // A resend, and the next: the resent rows are not kept again.
    expect(await copy.record('c1', [queued(2, 'r-2'), queued(3, 'r-3')])).toBe(3);
    // Another computer's seqs count in its own log.
    expect(await copy.record('c2', [{ ...queued(1), stream: 'c2/lane:talk' }])).toBe(1);
    // An older batch (a restart that had not saved its cursor) does not move `through` back.
    expect(await copy.record('c1', [queued(1)])).toBe(3);

    expect((await copy.readEntity(`run:${RUN}`)).map((e) => `${e.stream} ${e.seq}`)).toEqual(['c1/lane:talk 1', 'c2/lane:talk 1']);
    expect(await copy.entityIdsStartingWith('run', 'r-', 10)).toEqual(['r-1', 'r-2', 'r-3']);
    expect(await copy.entityIdsStartingWith('run', 'r-2', 10)).toEqual(['r-2']);
    const all = await copy.readAll(0, 10);
    expect(all.map(({ event }) => `${event.stream} ${event.seq}`)).toEqual(['c1/lane:talk 1', 'c1/lane:talk 2', 'c1/lane:talk 3', 'c2/lane:talk 1']);
    expect((await copy.readAll(all[1]!.position, 10)).map(({ event }) => event.seq)).toEqual([3, 1]);
  });

  it('keeps at most REPORT_LIMITS.perStream events of a run’s stream per computer, counting the rest as held', async () => {
    const { store } = await freshStore(kind);
    const copy = copyOf(store);
    const limit = REPORT_LIMITS.perStream;
    const rows = Array.from({ length: limit + 5 }, (_, i) => announced(i + 1, i + 1));
    for (let i = 0; i < rows.length; i += REPORT_LIMITS.batchEvents) await copy.record('c1', rows.slice(i, i + REPORT_LIMITS.batchEvents));
    expect(await copy.record('c1', [queued(limit + 6)])).toBe(limit + 6);
    const kept = await copy.readEntity(`run:${RUN}`);
    expect(kept.filter((e) => e.type === 'run.session.announced')).toHaveLength(limit);
    // The lane's decision about the run is kept: lanes are not bounded.
    expect(kept.at(-1)!.type).toBe('run.queued');
  });
});
