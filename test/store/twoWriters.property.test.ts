import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AppendResult, ExpectedVersion } from '../../runtime/store/eventStore.ts';
import { openSqliteStore, type SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { counterCodec, withCounters } from '../fixtures/counter/counterEvents.ts';
import { bumped, oneTo } from '../support/events.ts';

/**
 * Two writers (two stores opened separately on one file) append with random, sometimes stale,
 * expected versions. A step of one append runs alone; a longer step issues its appends in the same
 * tick, so each store group-commits its share and the two transactions land in either order.
 */
interface Target {
  readonly stream: number;
  /** 0: the version the model knows; another number: that far off it (stale); 'any': no check. */
  readonly skew: number | 'any';
}
interface Op {
  readonly writer: 0 | 1;
  readonly targets: readonly Target[];
  readonly events: number;
}

const STREAMS = 3;
const streamName = (i: number): string => `counter:s${i}`;

const target = fc.record({
  stream: fc.integer({ min: 0, max: STREAMS - 1 }),
  skew: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, fc.constantFrom(-2, -1, 1), fc.constant('any' as const)),
});
const op: fc.Arbitrary<Op> = fc.record({
  writer: fc.constantFrom(0 as const, 1 as const),
  targets: fc.uniqueArray(target, { minLength: 1, maxLength: 2, selector: (t) => t.stream }),
  events: fc.integer({ min: 1, max: 3 }),
});
const steps = fc.array(fc.array(op, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 12 });

interface Planned {
  readonly op: Op;
  readonly expected: Record<string, ExpectedVersion>;
  readonly ids: readonly number[];
  readonly streams: readonly string[];
}

/** The model: which appends committed, in one of the orders a serial log allows. */
function simulate(order: readonly Planned[], versions: ReadonlyMap<string, number>): { ok: Map<Planned, boolean>; versions: Map<string, number> } {
  const now = new Map(versions);
  const ok = new Map<Planned, boolean>();
  for (const p of order) {
    const fresh = Object.entries(p.expected).every(([s, e]) => e === 'any' || e === (now.get(s) ?? 0));
    ok.set(p, fresh);
    if (fresh) for (const s of p.streams) now.set(s, (now.get(s) ?? 0) + 1);
  }
  return { ok, versions: now };
}

async function checkInterleaving(plan: readonly Op[][]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'runledger-prop-'));
  const path = join(dir, 'runledger.db');
  const stores: SqliteEventStore[] = [await openSqliteStore(path, { codec: counterCodec }), await openSqliteStore(path, { codec: counterCodec })];
  try {
    let versions = new Map<string, number>();
    const committed = new Set<number>();
    const refused = new Set<number>();
    let nextId = 1;

    for (const step of plan) {
      const planned: Planned[] = step.map((o) => {
        const expected: Record<string, ExpectedVersion> = {};
        for (const t of o.targets) {
          const known = versions.get(streamName(t.stream)) ?? 0;
          expected[streamName(t.stream)] = t.skew === 'any' ? 'any' : Math.max(0, known + t.skew);
        }
        const streams = Array.from({ length: o.events }, (_, j) => streamName(o.targets[j % o.targets.length]!.stream));
        return { op: o, expected, streams, ids: streams.map(() => nextId++) };
      });
      const results: AppendResult[] =
        planned.length === 1
          ? [await stores[planned[0]!.op.writer]!.append(requestOf(planned[0]!))]
          : await Promise.all(planned.map((p) => stores[p.op.writer]!.append(requestOf(p))));

      // Each store commits its share in issue order; the two shares commit one after the other.
      const byWriter = (w: 0 | 1) => planned.filter((p) => p.op.writer === w);
      const orders = [
        [...byWriter(0), ...byWriter(1)],
        [...byWriter(1), ...byWriter(0)],
      ];
      const outcome = orders.map((order) => simulate(order, versions)).find((s) => planned.every((p, i) => s.ok.get(p) === results[i]!.ok));
      expect(outcome, `no serial order explains ${JSON.stringify(results.map((r) => r.ok))}`).toBeDefined();
      versions = outcome!.versions;

      planned.forEach((p, i) => {
        const result = results[i]!;
        if (!result.ok) {
          expect(result.conflict.expected).not.toBe(result.conflict.actual);
          for (const id of p.ids) refused.add(id);
          return;
        }
        expect(result.events.map((e) => e.data)).toEqual(p.ids.map((total) => ({ total })));
        for (const [stream, expected] of Object.entries(p.expected)) {
          const own = result.events.filter((e) => e.stream === stream).map((e) => e.version);
          if (own.length && expected !== 'any') expect(own).toEqual(oneTo(own.length).map((n) => n + expected));
        }
        for (const id of p.ids) committed.add(id);
      });
    }

    const log = await stores[0]!.readAll(0, 100_000);
    expect(log.map((e) => e.seq)).toEqual(oneTo(log.length));
    expect(new Set(log.map((e) => e.seq)).size).toBe(log.length);
    for (let s = 0; s < STREAMS; s++) {
      const own = log.filter((e) => e.stream === streamName(s));
      expect(own.map((e) => e.version)).toEqual(oneTo(own.length));
      expect(await stores[1]!.streamVersion(streamName(s))).toBe(versions.get(streamName(s)) ?? 0);
    }
    const written = withCounters(log).map((e) => (e.type === 'counter.bumped' ? e.data.total : -1));
    expect(new Set(written)).toEqual(committed);
    expect(written.length).toBe(committed.size);
    expect(written.filter((id) => refused.has(id))).toEqual([]);
  } finally {
    for (const store of stores) await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function requestOf(p: Planned) {
  return { expected: p.expected, events: p.streams.map((stream, j) => bumped(stream, p.ids[j]!)) };
}

describe('two writers on one file (property)', () => {
  it('given random interleavings of appends with random expected versions, then seqs are 1..N, every stream is 1..k and every refused append wrote nothing', async () => {
    await fc.assert(fc.asyncProperty(steps, checkInterleaving), { numRuns: 40 });
  });
});
