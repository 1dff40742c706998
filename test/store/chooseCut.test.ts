/**
 * The retention cut (docs/retention.md#the-cut) as a pure fold over the live log's rows. A run's history
 * can go on after its end (a computer's late claim, its `run.ended` after the board finished the run):
 * when its end already left for an archive, those late rows must not hold every later cut back.
 */
import { describe, expect, it } from 'vitest';
import type { FoldRow } from '../../runtime/store/eventStore.ts';
import { CutFinder } from '../../runtime/store/retention/chooseCut.ts';

const DAY_MS = 86_400_000;
const row = (seq: number, at: number, stream: string, type: string, data: object = {}): FoldRow => ({
  seq,
  at,
  stream,
  type,
  data: JSON.stringify(data),
  cause: null,
});

function cutOf(rows: readonly FoldRow[], archived: (entity: string) => boolean = () => false): number {
  const finder = new CutFinder(3 * DAY_MS, rows[0]!.seq - 1);
  for (const r of rows) finder.visit(r);
  return finder.cut(archived);
}

describe('the retention cut', () => {
  it('stops before the first event of a run that has not ended', () => {
    const rows = [
      row(11, DAY_MS, 'run:a', 'board.run.submitted', { runId: 'a' }),
      row(12, DAY_MS, 'run:a', 'board.run.finished', { runId: 'a' }),
      row(13, DAY_MS, 'run:b', 'board.run.submitted', { runId: 'b' }),
      row(14, DAY_MS, 'lane:x', 'lane.touched'),
      row(15, 4 * DAY_MS, 'lane:x', 'lane.touched'),
    ];
    expect(cutOf(rows)).toBe(12);
  });

  it('is not held back by the late rows of a run whose history (and end) already left for an archive', () => {
    const rows = [
      row(11, DAY_MS, 'c1/lane:x', 'run.ended', { runId: 'a' }),
      row(12, 2 * DAY_MS, 'run:b', 'board.run.submitted', { runId: 'b' }),
      row(13, 2 * DAY_MS, 'run:b', 'board.run.finished', { runId: 'b' }),
      row(14, 4 * DAY_MS, 'lane:x', 'lane.touched'),
    ];
    expect(cutOf(rows, (entity) => entity === 'run:a')).toBe(13);
    // A run never seen in an archive and not ended is open: the cut stays before it.
    expect(cutOf(rows)).toBe(10);
  });
});
