import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cursorsProjection } from '../../projections/cursors.ts';
import type { AnyProjection } from '../../projections/projection.ts';
import { hydrateProjections, saveCheckpoints } from '../../runtime/folds/hydrate.ts';
import { rebuildProjections } from '../../runtime/folds/keeper/rebuild.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { counterRegistry } from '../fixtures/counter/counterRegistry.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { countersProjection } from '../fixtures/counter/countersProjection.ts';
import { bumped } from '../support/events.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDbPath } from '../support/tempStore.ts';

const projections = [cursorsProjection, countersProjection] as readonly AnyProjection[];

async function givenCountersCheckpointed(store: EventStore): Promise<void> {
  await store.append({ expected: { 'counter:a': 0, 'counter:b': 0 }, events: [bumped('counter:a', 3), bumped('counter:b', 4)] });
  await store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 7)] });
  await saveCheckpoints(store, (await hydrateProjections(store, projections)).values());
}

function tamper(path: string, name: string, state: string): void {
  const raw = new Database(path);
  try {
    raw.prepare('update projection_checkpoints set state = ? where name = ?').run(state, name);
  } finally {
    raw.close();
  }
}

describe('rebuildProjections: the stored projections against a fold from seq 0', () => {
  it('given checkpoints saved from a fold, when rebuilding, then every projection is reported equal', async () => {
    const store = await openCounterStore();
    await givenCountersCheckpointed(store);

    const reports = await rebuildProjections(store, projections);

    expect(reports).toEqual([
      { projection: 'cursors', checkpointSeq: 3, equal: true },
      { projection: 'counters', checkpointSeq: 3, equal: true },
    ]);
  });

  it('given a checkpoint behind the head of the log, when rebuilding, then it is compared with the rebuild as of its own seq', async () => {
    const store = await openCounterStore();
    await givenCountersCheckpointed(store);
    await store.append({ expected: { 'counter:a': 2 }, events: [bumped('counter:a', 9)] });

    const reports = await rebuildProjections(store, projections);

    expect(reports.every((r) => r.equal && r.checkpointSeq === 3)).toBe(true);
  });

  it('given checkpoints saved on an empty log, when rebuilding, then they equal the initial states at seq 0', async () => {
    const store = await openCounterStore();
    await saveCheckpoints(store, (await hydrateProjections(store, projections)).values());

    expect(await rebuildProjections(store, projections)).toEqual([
      { projection: 'cursors', checkpointSeq: 0, equal: true },
      { projection: 'counters', checkpointSeq: 0, equal: true },
    ]);
  });

  it('given no checkpoint stored, when rebuilding, then there is nothing to disagree with', async () => {
    const store = await openCounterStore();
    await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

    expect(await rebuildProjections(store, projections)).toEqual([
      { projection: 'cursors', checkpointSeq: null, equal: true },
      { projection: 'counters', checkpointSeq: null, equal: true },
    ]);
  });

  it('given a checkpoint whose state was tampered with, when rebuilding, then it is reported different with the path that differs, and `runledger rebuild` exits 1', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    await givenCountersCheckpointed(store);
    tamper(path, 'counters@1', '{"a":7,"b":5}');

    const reports = await rebuildProjections(store, projections);

    expect(reports[0]).toMatchObject({ projection: 'cursors', equal: true });
    expect(reports[1]).toEqual({ projection: 'counters', checkpointSeq: 3, equal: false, detail: 'state.b: stored 5, rebuilt 4' });
    await store.close();
    const cli = await runInProcess(['rebuild', '--db', path], { registry: counterRegistry });
    expect(cli.status).toBe(1);
    expect(cli.stdout).toContain('✗ counters: differs from its checkpoint at seq 3: state.b: stored 5, rebuilt 4');
    const json = await runInProcess(['rebuild', '--db', path, '--json'], { registry: counterRegistry });
    expect(json.status).toBe(1);
    const printed = JSON.parse(json.stdout) as { ok: boolean; projections: { projection: string; equal: boolean }[] };
    expect(printed.ok).toBe(false);
    expect(printed.projections.filter((r) => !r.equal).map((r) => r.projection)).toEqual(['counters']);
  });

  it('given a checkpoint at a seq past the end of the log, when rebuilding, then it is reported different', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    await givenCountersCheckpointed(store);
    await store.checkpoints.save({ name: 'counters@1', seq: 50, state: '{"a":7,"b":4}' });

    const reports = await rebuildProjections(store, projections);

    expect(reports[1]).toMatchObject({ equal: false, detail: 'the checkpoint is at seq 50 but the log ends at seq 3' });
  });

  it('given a tampered checkpoint, when rebuilding with write, then the rebuilt states are stored and the next rebuild is equal', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    await givenCountersCheckpointed(store);
    tamper(path, 'counters@1', '{}');

    await rebuildProjections(store, projections, { write: true });

    expect(JSON.parse((await store.checkpoints.load('counters@1'))!.state)).toEqual({ a: 7, b: 4 });
    expect((await rebuildProjections(store, projections)).every((r) => r.equal)).toBe(true);
  });
});
