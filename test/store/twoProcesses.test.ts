import { describe, expect, it } from 'vitest';
import { withCounters } from '../fixtures/counter/counterEvents.ts';
import { oneTo } from '../support/events.ts';
import { startChild } from '../support/processes.ts';
import { storeKinds } from '../support/storeKinds.ts';

interface Outcome {
  ids: [number, number];
  ok: boolean;
  seqs: number[];
}

describe.each(storeKinds)('on $name', (kind) => {
  describe('two processes appending to one log', () => {
    it('given two processes racing with expected versions, then the log has no gap and no duplicate, and every append committed whole or not at all', async () => {
      const path = await kind.fresh();
      const store = await kind.open(path);
      const children = [startChild('appender.ts', [path, '1', '150']), startChild('appender.ts', [path, '2', '150'])];
      await Promise.all(children.map((c) => c.waitForLine((l) => l === 'ready')));

      for (const child of children) child.send('go');
      const exits = await Promise.all(children.map((c) => c.waitForExit()));

      expect(exits, children.map((c) => c.errors()).join('\n')).toEqual([
        { code: 0, signal: null },
        { code: 0, signal: null },
      ]);
      const outcomes: Outcome[] = children.flatMap((c) =>
        c
          .output()
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Outcome),
      );
      expect(outcomes).toHaveLength(300);
      const log = await store.readAll(0, 10_000);
      expect(log.map((e) => e.seq)).toEqual(oneTo(log.length));
      for (const stream of ['counter:a', 'counter:b', 'counter:c']) {
        const versions = log.filter((e) => e.stream === stream).map((e) => e.version);
        expect(versions).toEqual(oneTo(versions.length));
      }
      const seqOfMark = new Map(withCounters(log).map((e) => [e.type === 'counter.bumped' ? e.data.total : -1, e.seq]));
      expect(seqOfMark.size).toBe(log.length);
      for (const outcome of outcomes) {
        const found = outcome.ids.map((id) => seqOfMark.get(id));
        if (outcome.ok) {
          expect(found).toEqual(outcome.seqs);
          expect(outcome.seqs[1]).toBe(outcome.seqs[0]! + 1);
        } else {
          expect(found).toEqual([undefined, undefined]);
        }
      }
      const committed = outcomes.filter((o) => o.ok);
      expect(log.length).toBe(committed.length * 2);
      // Both wrote, and the race was real: some appends lost it.
      expect(new Set(log.map((e) => e.actor)).size).toBe(2);
      expect(committed.length).toBeLessThan(300);
    });
  });
});
