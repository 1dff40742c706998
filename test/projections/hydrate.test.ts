import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ForeignRow } from '../../events/codec.ts';
import { type AnyProjection, checkpointName } from '../../projections/projection.ts';
import { hydrateProjections, saveCheckpoints } from '../../runtime/folds/hydrate.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { appendBumps, countingProjection } from '../support/countingProjection.ts';
import { tempDbPath } from '../support/tempStore.ts';

describe('hydrateProjections: checkpoint, then the tail', () => {
  it('given a checkpoint at seq 10 of 15, when hydrating, then it loads the checkpoint and folds only the 5 events after it', async () => {
    const store = await openCounterStore();
    await appendBumps(store, 10);
    await saveCheckpoints(store, (await hydrateProjections(store, [countingProjection() as AnyProjection])).values());
    await appendBumps(store, 5);
    const tally = countingProjection();

    const folded = await hydrateProjections(store, [tally as AnyProjection]);

    expect(tally.evolved).toBe(5);
    expect(folded.get('tally')).toMatchObject({ seq: 15, state: { events: 15, lastSeq: 15 } });
  });

  it('given a checkpoint written by an older version of the projection, when hydrating, then it is ignored and the fold starts at seq 0', async () => {
    const store = await openCounterStore();
    await appendBumps(store, 10);
    await store.checkpoints.save({ name: checkpointName(countingProjection(1) as AnyProjection), seq: 10, state: '{"events":999,"lastSeq":10}' });
    const newer = countingProjection(2);

    const folded = await hydrateProjections(store, [newer as AnyProjection]);

    expect(newer.evolved).toBe(10);
    expect(folded.get('tally')).toMatchObject({ seq: 10, state: { events: 10, lastSeq: 10 } });
  });

  it('given projections checkpointed at different seqs, when hydrating together, then each folds only what its checkpoint lacks', async () => {
    const store = await openCounterStore();
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
    const store = await openCounterStore();
    await appendBumps(store, 10);
    await saveCheckpoints(store, (await hydrateProjections(store, [countingProjection() as AnyProjection])).values());
    const tally = countingProjection();

    const folded = await hydrateProjections(store, [tally as AnyProjection], 6);

    expect(tally.evolved).toBe(6);
    expect(folded.get('tally')).toMatchObject({ seq: 6, state: { events: 6, lastSeq: 6 } });
  });

  it('given a checkpoint saved, when an older one is saved after it, then the newer checkpoint is kept', async () => {
    const store = await openCounterStore();
    await store.checkpoints.save({ name: 'tally@1', seq: 10, state: '{"events":10,"lastSeq":10}' });

    await store.checkpoints.save({ name: 'tally@1', seq: 5, state: '{"events":5,"lastSeq":5}' });

    expect(await store.checkpoints.load('tally@1')).toEqual({ name: 'tally@1', seq: 10, state: '{"events":10,"lastSeq":10}' });
  });

  it('given rows this version cannot read among the log, when hydrating, then each projection folds every other event, and each row is named once', async () => {
    const path = tempDbPath();
    const named: ForeignRow[] = [];
    const store = await openCounterStore(path, { foreignRows: (row) => named.push(row) });
    await appendBumps(store, 3);
    const raw = new Database(path);
    raw.exec(`INSERT INTO events (stream, version, type, data, at, cause, actor) VALUES
      ('counter:new', 1, 'counter.teleported', '{}', 1, NULL, 'newer:1'),
      ('counter:new', 2, 'counter.bumped', '{"total":"many"}', 1, NULL, 'newer:1')`);
    raw.close();
    await appendBumps(store, 2);
    const tally = countingProjection();

    const folded = await hydrateProjections(store, [tally as AnyProjection]);
    await hydrateProjections(store, [countingProjection() as AnyProjection]);

    expect(folded.get('tally')).toMatchObject({ seq: 7, state: { events: 5, lastSeq: 7 } });
    expect(named.map((r) => [r.seq, r.type])).toEqual([
      [4, 'counter.teleported'],
      [5, 'counter.bumped'],
    ]);
  });
});
