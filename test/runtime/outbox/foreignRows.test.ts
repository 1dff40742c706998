import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import type { EffectConsumer } from '../../../runtime/actors/effectConsumer.ts';
import { Outbox } from '../../../runtime/actors/outbox.ts';
import { counterEventOf } from '../../fixtures/counter/counterEvents.ts';
import { openCounterStore } from '../../fixtures/counter/counterStore.ts';
import { bumped, milestone } from '../../support/events.ts';
import { stampedAt } from '../../support/stampedAt.ts';
import { tempDbPath } from '../../support/tempStore.ts';

/** A row a newer runledger could have written, behind the store's back. */
function insertForeign(path: string): void {
  const raw = new Database(path);
  try {
    raw.exec(
      "INSERT INTO events (stream, version, type, data, at, cause, actor) SELECT 'counter:z', count(*) + 1, 'counter.teleported', '{}', 1, NULL, 'newer:1' FROM events WHERE stream = 'counter:z'",
    );
  } finally {
    raw.close();
  }
}

describe('outbox: a row this version cannot read leaves a gap in seqs, not in its feed', () => {
  it('given a following outbox, when foreign rows come between effects, then it performs every effect after them, once', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path, { pollMs: 10, foreignRows: () => {} });
    const performed: number[] = [];
    const consumer: EffectConsumer<{ total: number }> = {
      name: 'announce',
      delivery: 'at-most-once',
      effectOf: (event) => {
        const counter = counterEventOf(event);
        return counter?.type === 'counter.milestone.reached' ? { total: counter.data.total } : null;
      },
      async perform(_effect, event) {
        performed.push(event.seq);
        return { ok: true };
      },
    };
    const outbox = new Outbox(store, consumer, stampedAt(1));
    await outbox.open();
    const subscription = outbox.follow();
    try {
      await store.append({ expected: { 'counter:a': 'any' }, events: [bumped('counter:a', 1), milestone('counter:a', 1)] });
      await vi.waitFor(() => expect(performed).toEqual([2]));
      insertForeign(path);
      insertForeign(path);
      const later = await store.append({ expected: { 'counter:a': 'any' }, events: [bumped('counter:a', 2), milestone('counter:a', 2)] });

      await vi.waitFor(() => expect(performed).toEqual([2, later.ok ? later.events[1]!.seq : -1]), { timeout: 5_000 });
    } finally {
      subscription.unsubscribe();
    }
  });
});
