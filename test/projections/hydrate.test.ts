import { describe, expect, it } from 'vitest';
import { hydrateProjections, saveCheckpoints } from '../../projections/hydrate.ts';
import { type AnyProjection, checkpointName } from '../../projections/projection.ts';
import { openTempStore } from '../support/tempStore.ts';
import { appendBumps, countingProjection } from '../support/countingProjection.ts';

describe('hydrateProjections: checkpoint, then the tail', () => {
  it('given a checkpoint at seq 10 of 15, when hydrating, then it loads the checkpoint and folds only the 5 events after it', async () => {
    const store = await openTempStore();
    await appendBumps(store, 10);
    await saveCheckpoints(store, (await hydrateProjections(store, [countingProjection() as AnyProjection])).values());
    await appendBumps(store, 5);
    const tally = countingProjection();

    const folded = await hydrateProjections(store, [tally as AnyProjection]);

    expect(tally.evolved).toBe(5);
    expect(folded.get('tally')).toMatchObject({ seq: 15, state: { events: 15, lastSeq: 15 } });
  });

  it('given a checkpoint written by an older version of the projection, when hydrating, then it is ignored and the fold starts at seq 0', async () => {
    const store = await openTempStore();
    await appendBumps(store, 10);
    await store.checkpoints.save({ name: checkpointName(countingProjection(1) as AnyProjection), seq: 10, state: '{"events":999,"lastSeq":10}' });
    const newer = countingProjection(2);

    const folded = await hydrateProjections(store, [newer as AnyProjection]);

    expect(newer.evolved).toBe(10);
    expect(folded.get('tally')).toMatchObject({ seq: 10, state: { events: 10, lastSeq: 10 } });
  });

  it('given projections checkpointed at different seqs, when hydrating together, then each folds only what its checkpoint lacks', async () => {
    const store = await openTempStore();
    await appendBumps(store, 4);
    await saveCheckpoints(store, (await hydrateProjections(store, [countingProjection() as AnyProjection])).values());
    await appendBumps(store, 4);
    const checkpointed = countingProjection();
    const fresh = countingProjection(1, 'fresh');

    const folded = await hydrateProjections(store, [checkpointed as AnyProjection, fresh as AnyProjection]);

    expect(checkpointed.evolved).toBe(4);
    expect(fresh.evolved).toBe(8);
    expect(folded.get('tally')).toMatchObject({ seq: 8, state: { events: 8, lastSeq: 8 } });
    expect(folded.get('fresh')).toMatchObject({ seq: 8, state: { events: 8, lastSeq: 8 } });
  });

  it('given a checkpoint past `until`, when hydrating as of an earlier seq, then it folds from seq 0 up to `until` only', async () => {
    const store = await openTempStore();
    await appendBumps(store, 10);
    await saveCheckpoints(store, (await hydrateProjections(store, [countingProjection() as AnyProjection])).values());
    const tally = countingProjection();

    const folded = await hydrateProjections(store, [tally as AnyProjection], 6);

    expect(tally.evolved).toBe(6);
    expect(folded.get('tally')).toMatchObject({ seq: 6, state: { events: 6, lastSeq: 6 } });
  });

  it('given a checkpoint saved, when an older one is saved after it, then the newer checkpoint is kept', async () => {
    const store = await openTempStore();
    await store.checkpoints.save({ name: 'tally@1', seq: 10, state: '{"events":10,"lastSeq":10}' });

    await store.checkpoints.save({ name: 'tally@1', seq: 5, state: '{"events":5,"lastSeq":5}' });

    expect(await store.checkpoints.load('tally@1')).toEqual({ name: 'tally@1', seq: 10, state: '{"events":10,"lastSeq":10}' });
  });
});
