/** The simulator over fixed seeds 101-200 (small worlds, every fault): see seeds.test.ts. */
import { describe, it } from 'vitest';
import { parseFaults } from '../../sim/faults.ts';
import { expectSeedsHold, seedRange } from './seedRange.ts';

describe('the simulator over more fixed seeds', () => {
  it('given seeds 101 to 200, then every world keeps every invariant', async () => {
    await expectSeedsHold('simulator 101-200', seedRange(101, 200), { faults: parseFaults('all'), size: 'small', shrink: false });
  }, 120_000);
});
