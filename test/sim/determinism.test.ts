/**
 * The simulator's first promise: a seed names one history. The same seed, run twice in one process
 * (after another world ran in between), gives the same logs row for row: types, streams, data, times.
 */
import { describe, expect, it } from 'vitest';
import { FAULT_KINDS } from '../../sim/faults.ts';
import { runWorld } from '../../sim/world.ts';

describe('the simulator is deterministic', () => {
  it('given one seed with every fault enabled, when it is run twice with another world between, then every log is the same row for row', async () => {
    const faults = new Set(FAULT_KINDS);
    const first = await runWorld({ seed: 4242, faults, size: 'small', keepRows: true });
    await runWorld({ seed: 7, faults, size: 'small' });
    const second = await runWorld({ seed: 4242, faults, size: 'small', keepRows: true });
    expect(first.rows.length).toBeGreaterThan(50);
    expect(second.rows).toEqual(first.rows);
    expect(second.history).toEqual(first.history);
    expect(second.plan).toEqual(first.plan);
  });

  it('given one seed of two boards on one log, when it is run twice with another world between, then the shared log and every computer log are the same row for row', async () => {
    const faults = new Set(FAULT_KINDS);
    const first = await runWorld({ seed: 4242, faults, size: 'small', boards: 2, keepRows: true });
    await runWorld({ seed: 7, faults, size: 'small', boards: 2 });
    const second = await runWorld({ seed: 4242, faults, size: 'small', boards: 2, keepRows: true });
    expect(first.rows.length).toBeGreaterThan(50);
    expect(second.rows).toEqual(first.rows);
    expect(second.history).toEqual(first.history);
  });
});
