/** The simulator over fixed seeds 31-60 (small worlds, every fault), each invariant put to the test in them: see seeds1to30.test.ts. */
import { describe, it } from 'vitest';
import { parseFaults } from '../../sim/faults.ts';
import { expectSeedsHold, seedRange } from './seedRange.ts';

describe('the simulator over more fixed seeds', () => {
  it('given seeds 31 to 60, then every world keeps every invariant', async () => {
    await expectSeedsHold('simulator 31-60', seedRange(31, 60), { faults: parseFaults('all'), size: 'small', shrink: false });
  }, 120_000);
});
