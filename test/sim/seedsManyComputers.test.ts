/**
 * Worlds of many computers (docs/rules.md#dispatch): a run is offered to one computer at a time among
 * twenty, passed on when one drains, dies, or does not answer, and every fault of the other worlds
 * plays as well. Fixed seeds, small worlds.
 */
import { describe, it } from 'vitest';
import { parseFaults } from '../../sim/faults.ts';
import { expectSeedsHold, seedRange } from './seedRange.ts';

describe('the simulator over fixed seeds of many computers', () => {
  it('given seeds 1 to 3 with twenty computers, then every world keeps every invariant', async () => {
    await expectSeedsHold(
      'simulator, twenty computers',
      seedRange(1, 3),
      { faults: parseFaults('all'), size: 'small', computers: 20, shrink: false },
      false,
    );
  }, 120_000);
});
