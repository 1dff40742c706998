/**
 * Two boards on one log, sharing the chores' lease and the runs' heartbeats as on PostgreSQL
 * (sim/boards.ts): fixed seeds 16-30 (1-15 in seedsTwoBoards1to15.test.ts), each with every fault, a
 * board's death and restart and a full log included (300 of 300 small and 450 of 450 normal worlds held
 * when the lease's two bugs, the regressions' seeds 25 and 23, were fixed).
 */
import { describe, it } from 'vitest';
import { parseFaults } from '../../sim/faults.ts';
import { expectSeedsHold, seedRange } from './seedRange.ts';

describe('the simulator over fixed seeds of two boards on one log', () => {
  it('given seeds 16 to 30 of two boards, then every world keeps every invariant', async () => {
    await expectSeedsHold(
      'simulator, two boards 16-30',
      seedRange(16, 30),
      { faults: parseFaults('all'), size: 'small', boards: 2, shrink: false },
      false,
    );
  }, 120_000);
});
