/**
 * An outbox's mark is a checkpoint of its own stream's fold (issue 16): one it cannot read as this
 * version wrote it (another version's shape, a damaged row) is no reason to skip or redo an effect,
 * nor to fail the start: the outbox folds its stream from the start instead, as it did before marks.
 */
import { describe, expect, it } from 'vitest';
import type { EffectConsumer } from '../../../runtime/actors/effectConsumer.ts';
import { Outbox } from '../../../runtime/actors/outbox.ts';
import { counterEventOf } from '../../fixtures/counter/counterEvents.ts';
import { openCounterStore } from '../../fixtures/counter/counterStore.ts';
import { bumped, milestone } from '../../support/events.ts';
import { stampedAt } from '../../support/stampedAt.ts';

const announcer = (performed: number[]): EffectConsumer<number> => ({
  name: 'announce',
  delivery: 'at-most-once',
  effectOf: (event) => (counterEventOf(event)?.type === 'counter.milestone.reached' ? event.seq : null),
  async perform(effect) {
    performed.push(effect);
    return { ok: true };
  },
});

describe("an outbox's mark of another shape", () => {
  for (const [what, state] of [
    ['a newer version', JSON.stringify({ v: 2, cursor: { seq: 1_000_000 }, takes: [] })],
    ['a damaged row', '{"version":'],
    ['wrong types', JSON.stringify({ version: 'x', cursor: 1_000_000, pending: [] })],
  ] as const) {
    it(`given ${what}, then the outbox opens from its stream alone and neither skips nor redoes an effect`, async () => {
      const store = await openCounterStore();
      const performed: number[] = [];
      const first = new Outbox(store, announcer(performed), stampedAt(1));
      await first.open();
      const first1 = await store.append({ expected: { 'counter:a': 'any' }, events: [bumped('counter:a', 0), milestone('counter:a', 1)] });
      if (!first1.ok) throw first1.conflict;
      await first.drain();
      first.stop();
      expect(performed).toHaveLength(1);
      await store.checkpoints.save({ name: 'outbox:announce', seq: 1_000_000, state });
      const later = await store.append({ expected: { 'counter:a': 'any' }, events: [milestone('counter:a', 2)] });
      if (!later.ok) throw later.conflict;

      const again = new Outbox(store, announcer(performed), stampedAt(1));
      await again.open();
      await again.drain();
      expect(performed).toEqual([performed[0], later.events[0]!.seq]);
    });
  }
});
