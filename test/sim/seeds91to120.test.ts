/** The simulator over fixed seeds 91-120 (small worlds, every fault): see seeds1to30.test.ts. */
import { describe, it } from 'vitest';
import { parseFaults } from '../../sim/faults.ts';
import { expectSeedsHold, seedRange } from './seedRange.ts';

describe('the simulator over more fixed seeds', () => {
  it('given seeds 91 to 120, then every world keeps every invariant', async () => {
    await expectSeedsHold('simulator 91-120', seedRange(91, 120), { faults: parseFaults('all'), size: 'small', shrink: false }, false);
  }, 120_000);
});
