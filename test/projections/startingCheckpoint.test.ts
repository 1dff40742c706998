/**
 * The starting checkpoint's fold (docs/retention.md#starting-checkpoints): carried from one cut's
 * states over the events to the next, it gives what one fold from the start gives; a state of another
 * version is never carried on, and a replay refuses to start from it, naming the fold.
 */
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../events/catalog.ts';
import type { Projection } from '../../projections/projection.ts';
import { CheckpointFolder, checkpointMismatch } from '../../projections/startingCheckpoint.ts';

const counter: Projection<{ n: number }> = {
  name: 'counter',
  version: 2,
  initial: () => ({ n: 0 }),
  evolve: (state, event) => ({ n: state.n + event.seq }),
};
const events = Array.from({ length: 10 }, (_, i) => ({ seq: i + 1 }) as DomainEvent);

describe('the starting checkpoint fold', () => {
  it('carried from a cut over the events after it, gives what one fold from the start gives', () => {
    const whole = new CheckpointFolder([counter], null);
    for (const e of events) whole.visit(e);
    const first = new CheckpointFolder([counter], null);
    for (const e of events.slice(0, 4)) first.visit(e);
    const second = new CheckpointFolder([counter], first.entries());
    for (const e of events.slice(4)) second.visit(e);

    expect(second.entries()).toEqual(whole.entries());
    expect(second.entries()).toEqual([{ name: 'counter', version: 2, state: '{"n":55}' }]);
    expect(second.missing).toEqual([]);
  });

  it('leaves out a fold whose state is of another version, and says why a replay cannot start from it', () => {
    const older = [{ name: 'counter', version: 1, state: '{"count":3}' }];
    const folder = new CheckpointFolder([counter], older);

    expect(folder.missing).toEqual(['counter@2']);
    expect(folder.entries()).toEqual([]);
    expect(checkpointMismatch(older, counter)).toBe('it holds counter version 1, and this runledger folds version 2 (the state changed shape since)');
    expect(checkpointMismatch([], counter)).toMatch(/holds no state of counter/);
    expect(checkpointMismatch([{ name: 'counter', version: 2, state: '{}' }], counter)).toBeNull();
  });
});
