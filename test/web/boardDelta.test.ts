/**
 * The board page's deltas (issue 31): what the board sends (boardDelta) applied by what the page runs
 * (static/boardModel.js) gives the next view exactly, for any two views: items added, changed,
 * removed and moved in each list, and fields changed or not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boardDelta } from '../../web/boardDelta.ts';
import type { BoardSnapshot } from '../../web/boardSnapshot.ts';
import { applyDelta } from '../../web/static/boardModel.js';

const name = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
const uniqueBy = <T>(item: fc.Arbitrary<T>, key: (t: T) => string) => fc.uniqueArray(item, { selector: key, maxLength: 6 });

const snapshot: fc.Arbitrary<BoardSnapshot> = fc.record({
  at: fc.nat(),
  lanes: uniqueBy(
    fc.record({
      lane: name,
      runs: fc.array(fc.record({ runId: name, state: fc.constantFrom('queued', 'running') }), { maxLength: 3 }),
      more: fc.nat(5),
    }),
    (l) => l.lane,
  ),
  claims: uniqueBy(fc.record({ runId: name, lane: name, computerId: name, claimedAt: fc.nat(3) }), (c) => c.runId),
  sessions: uniqueBy(fc.record({ computer: name, lane: name, sessionId: name, close: fc.constant(null) }), (s) => `${s.computer}\n${s.lane}`),
  computers: uniqueBy(fc.record({ id: name, connected: fc.boolean(), slots: fc.nat(4) }), (c) => c.id),
  counts: fc.record({ queued: fc.nat(3), parked: fc.nat(3), claiming: fc.nat(3), running: fc.nat(3) }),
  more: fc.record({ lanes: fc.nat(2), runs: fc.nat(2), claims: fc.nat(2), sessions: fc.nat(2), computers: fc.nat(2) }),
  stuck: fc.option(fc.record({ kind: fc.constant('no_taker'), text: name })),
  longestWait: fc.option(fc.record({ runId: name, since: fc.nat(3), warnAfterMs: fc.constant(1) })),
  usage: fc.constant(null),
}) as unknown as fc.Arbitrary<BoardSnapshot>;

describe('the board page by deltas', () => {
  it('a delta applied to the view it was made from gives the next view', () => {
    fc.assert(
      fc.property(snapshot, snapshot, (before, after) => {
        const delta = boardDelta(before, after);
        const applied = delta === null ? before : applyDelta(before, JSON.parse(JSON.stringify(delta)));
        expect({ ...applied, at: after.at }).toEqual(after);
      }),
      { numRuns: 500 },
    );
  });

  it('a part of the view a delta does not change is the same object after it: the page redraws only what changed', () => {
    fc.assert(
      fc.property(snapshot, snapshot, (before, after) => {
        const delta = boardDelta(before, after);
        if (delta === null) return;
        const applied = applyDelta(before, JSON.parse(JSON.stringify(delta)));
        for (const part of ['lanes', 'claims', 'sessions', 'computers', 'counts', 'more', 'stuck', 'longestWait', 'usage'] as const)
          if (!(part in delta) && !(delta.set && part in delta.set)) expect(applied[part]).toBe(before[part]);
      }),
      { numRuns: 500 },
    );
  });

  it('no delta when nothing but the time changed, and a small one when one lane did', () => {
    fc.assert(
      fc.property(snapshot, (view) => {
        expect(boardDelta(view, { ...view, at: view.at + 1 })).toBeNull();
        if (view.lanes.length === 0) return;
        const changed = { ...view, lanes: [{ ...view.lanes[0]!, more: view.lanes[0]!.more + 1 }, ...view.lanes.slice(1)] };
        expect(boardDelta(view, changed)).toEqual({ at: view.at, lanes: { put: [changed.lanes[0]] } });
      }),
    );
  });
});
