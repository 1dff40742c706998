import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../events/catalog.ts';
import { type AnyProjection, checkpointName, type Projection } from '../../projections/projection.ts';
import { queueProjection } from '../../projections/queue.ts';
import { projectionOf, storedDeciderProjections } from '../../replay/deciderStates.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayEntity } from '../../replay/replayEntity.ts';
import { replayUntil } from '../../replay/replayUntil.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';
import { rebuildAndCheck } from '../../runtime/folds/snapshot/checkSnapshots.ts';
import type { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { counterCodec } from '../fixtures/counter/counterEvents.ts';
import { projectionsWithCounters } from '../fixtures/counter/counterRegistry.ts';
import { openScenario, scenarioCopy } from '../replay/scenarioLog.ts';
import { appendBumps, countingProjection } from '../support/countingProjection.ts';
import { runledger } from '../support/processes.ts';
import { freshStore, storeKinds } from '../support/storeKinds.ts';

const tally = (seq: number) => ({ name: 'tally@1', seq, state: JSON.stringify({ events: seq, lastSeq: seq }) });
const all = (): AnyProjection[] => [...projections, ...storedDeciderProjections(deciders)];

/** The scenario with snapshots every `every` events, stored as `rebuild --write` stores them. */
async function scenarioWithSnapshots(
  every: number,
  path = scenarioCopy(),
): Promise<{ store: SqliteEventStore; path: string; written: readonly number[] }> {
  const store = await openScenario(path, { snapshots: { every, kept: 10 } });
  const result = await rebuildAndCheck(store, all(), { write: true, checkpointed: new Set(projections) });
  return { store, path, written: result.written!.snapshots };
}

function foldFromZero(log: readonly DomainEvent[], until: number): Record<string, unknown> {
  return Object.fromEntries(
    projections.map((p) => [p.name, JSON.parse(JSON.stringify(log.filter((e) => e.seq <= until).reduce((s, e) => p.evolve(s, e), p.initial())))]),
  );
}

describe.each(storeKinds)('snapshots on $name: kept, found and checked', (kind) => {
  it('keeps a checkpoint as a snapshot when it lands `every` events past the newest one, and only the newest `kept`', async () => {
    const { store } = await freshStore(kind, { snapshots: { every: 10, kept: 3 } });
    await appendBumps(store, 50);

    for (const seq of [5, 10, 15, 20, 30, 38, 40, 50]) await store.checkpoints.save(tally(seq));

    const listed = (await store.snapshots.list()).filter((s) => s.name === 'tally@1');
    expect(listed.map((s) => `${s.source} ${s.seq}`)).toEqual(['history 30', 'history 40', 'checkpoint 50', 'history 50']);
    expect((await store.snapshots.nearest('tally@1', 39))?.seq).toBe(30);
    expect((await store.snapshots.nearest('tally@1', 50))?.seq).toBe(50);
    expect(await store.snapshots.nearest('tally@1', 29)).toBeNull();
  });

  it('given snapshots at 10 and 20 of 30 events, when a projection is asked for as of 23, then it folds only the 3 events after 20', async () => {
    const { store } = await freshStore(kind);
    await appendBumps(store, 30);
    for (const seq of [10, 20]) await store.snapshots.save(tally(seq));
    const counting = countingProjection();

    const report = await replayUntil(store, [], [counting as AnyProjection], 23, { codec: counterCodec });

    expect(counting.evolved).toBe(3);
    expect(report.projections.tally).toEqual({ events: 23, lastSeq: 23 });
    expect(report.projectionsFrom).toEqual([{ name: 'tally', seq: 20, from: 'snapshot' }]);
  });

  it('given a snapshot past the end of the log, then `rebuild` reports it', async () => {
    const { store } = await freshStore(kind);
    await appendBumps(store, 5);
    await store.snapshots.save({ name: 'counters@1', seq: 9, state: '{}' });

    const check = await rebuildAndCheck(store, projectionsWithCounters);

    expect(check.firstDifference).toEqual({
      projection: 'counters',
      seq: 9,
      source: 'history',
      equal: false,
      detail: 'the snapshot is at seq 9 but the log ends at seq 5',
    });
  });
});

describe('snapshots: projection states kept at intervals of the log', () => {
  it('`rebuild --write` stores them between two inputs, and `rebuild` then finds every one equal to the log', async () => {
    const { store, written } = await scenarioWithSnapshots(50);
    const log = await store.readAll(0, 1000);

    expect(written.length).toBeGreaterThanOrEqual(4);
    for (const seq of written.slice(0, -1)) expect(log.find((e) => e.seq === seq + 1)?.cause).toBeNull();
    const check = await rebuildAndCheck(store, all());
    expect(check.ok).toBe(true);
    const queue = check.projections.find((p) => p.projection === 'queue')!;
    // The daemon's projections get their checkpoint at the head; the deciders' states a snapshot there.
    expect(queue.snapshots.map((s) => `${s.source} ${s.seq}`)).toEqual([
      ...written.slice(0, -1).map((seq) => `history ${seq}`),
      `checkpoint ${log.length}`,
    ]);
    expect(written.at(-1)).toBe(log.length);
    expect(check.projections.find((p) => p.projection === 'decider:run')!.snapshots.map((s) => s.seq)).toEqual(written);
    // The queue's and the board's decider states are those projections: not stored twice.
    expect(check.projections.map((p) => p.projection)).not.toContain('decider:queue');
    await store.close();
  });

  it('given a tampered snapshot, then `rebuild` names its projection, its seq and the path that differs, and exits 1', async () => {
    const { store, path, written } = await scenarioWithSnapshots(50);
    await store.close();
    const seq = written[1]!;
    const raw = new Database(path);
    raw
      .prepare(`update projection_snapshots set state = json_set(state, '$.c1.slots', 7) where name = ? and seq = ?`)
      .run(`queue@${queueProjection.version}`, seq);
    raw
      .prepare(`update projection_snapshots set state = json_set(state, '$."c1/run:r4".phase', 'new') where name = ? and seq = ?`)
      .run('decider:run@2', written[2]!);
    raw.close();
    const reopened = await openScenario(path);

    const check = await rebuildAndCheck(reopened, all());
    await reopened.close();
    const cli = runledger(['rebuild', '--db', path]);

    expect(check.ok).toBe(false);
    expect(check.firstDifference).toEqual({
      projection: 'queue',
      seq,
      source: 'history',
      equal: false,
      detail: 'state.c1.slots: stored 7, rebuilt 2',
    });
    expect(check.projections.find((p) => p.projection === 'decider:run')).toMatchObject({
      equal: false,
      detail: 'state.c1/run:r4.phase: stored "new", rebuilt "settled"',
    });
    expect(cli.status).toBe(1);
    expect(cli.stdout).toContain(`✗ queue: differs from its snapshot at seq ${seq}: state.c1.slots: stored 7, rebuilt 2`);
    expect(cli.stdout).toContain(
      `✗ decider:run: differs from its snapshot at seq ${written[2]}: state.c1/run:r4.phase: stored "new", rebuilt "settled"`,
    );
    expect(cli.stdout).toContain(`first difference: queue, its snapshot at seq ${seq}`);
  });
});

describe('the deciders’ states in snapshots', () => {
  it('reads the queue’s and the board’s from those projections: the same fold of the same events', async () => {
    const store = await openScenario();
    const log = await store.readAll(0, 1000);
    await store.close();
    const fold = (p: Projection<unknown>) => log.reduce((s, e) => p.evolve(s, e), p.initial());
    const queue = deciders.find((d) => d.name === 'queue')!;
    const board = deciders.find((d) => d.name === 'board')!;

    expect(fold(projectionOf(queue) as Projection<unknown>)).toEqual(fold(projections.find((p) => p.name === 'queue')!));
    expect(fold(projectionOf(board) as Projection<unknown>)).toEqual({ board: fold(projections.find((p) => p.name === 'board')!) });
  });

  it('keeps a settled run as `{phase: settled}`, which the run decider ignores every input of', async () => {
    const store = await openScenario();
    const log = await store.readAll(0, 1000);
    await store.close();
    const run = deciders.find((d) => d.name === 'run')!;
    const states = log.reduce((s, e) => projectionOf(run).evolve(s, e), projectionOf(run).initial());

    expect(states['c1/run:r1']).toEqual({ phase: 'settled' });
    for (const input of log.filter((e) => run.isInput(e) && run.scopeOf(e) !== null)) {
      expect(run.ignores!(states['c1/run:r1'], { ...input, stream: 'c1/run:r1' } as never), input.type).toBe(true);
    }
  });
});

describe('replay from snapshots', () => {
  it('`--until` starts each projection and each decider at its nearest snapshot, folds only the rest, and equals a fold from seq 0', async () => {
    const { store, written } = await scenarioWithSnapshots(50);
    const log = await store.readAll(0, 1000);
    const until = written[2]! + 15;

    const report = await replayUntil(store, deciders, projections, until);

    expect(report).toMatchObject({ ok: true, lastSeq: until, verifiedFrom: written[2], folded: 15 });
    expect(report.projectionsFrom.every((s) => s.from === 'snapshot' && s.seq === written[2])).toBe(true);
    expect(report.decidersFrom.every((s) => s.seq === written[2])).toBe(true);
    expect(report.inputs).toBe(log.filter((e) => e.seq > written[2]! && e.seq <= until && e.cause === null).length);
    expect(JSON.parse(JSON.stringify(report.projections))).toEqual(foldFromZero(log, until));
    await store.close();
  });

  it('`--until` inside an append prints the projections as of it, and judges the whole append', async () => {
    const { store } = await scenarioWithSnapshots(50);
    const log = await store.readAll(0, 1000);
    const input = log.find((e) => e.seq > 60 && e.cause === null && log.some((d) => d.cause === e.seq && d.type === 'board.run.offered'))!;

    const report = await replayUntil(store, deciders, projections, input.seq + 1);

    expect(report).toMatchObject({ ok: true, lastSeq: input.seq + 1 });
    expect(report.decisions).toBe(log.filter((e) => e.seq > report.verifiedFrom && e.cause !== null && e.cause <= input.seq).length);
    expect(JSON.parse(JSON.stringify(report.projections))).toEqual(foldFromZero(log, input.seq + 1));
    await store.close();
  });

  it('given a deciders’ snapshot inside an append (a checkpoint taken anywhere), then the decisions of the input before it are folded, not misread', async () => {
    const store = await openScenario();
    const log = await store.readAll(0, 1000);
    const input = log.find((e) => e.cause === null && log.filter((d) => d.cause === e.seq).length >= 3 && e.seq > 60)!;
    const inside = input.seq + 1;
    for (const projection of [...projections, ...storedDeciderProjections(deciders)]) {
      const state = log.filter((e) => e.seq <= inside).reduce((s, e) => projection.evolve(s, e), projection.initial());
      await store.snapshots.save({ name: checkpointName(projection), seq: inside, state: JSON.stringify(state) });
    }

    const report = await replayUntil(store, deciders, projections, inside + 20);

    expect(report).toMatchObject({ ok: true, verifiedFrom: inside });
    await store.close();
  });

  it('`--run` starts from the deciders’ snapshot before the run’s first input, and across a long gap skips to a later one', async () => {
    const { store } = await scenarioWithSnapshots(20);
    const fromZero = (await replayEntity(await openScenario(), deciders, 'run', 'r4'))!;

    const report = (await replayEntity(store, deciders, 'run', 'r4', { jumpMin: 5 }))!;

    expect(report.ok).toBe(true);
    expect(report.folded.snapshots.length).toBeGreaterThanOrEqual(2);
    expect(report.folded.from).toBe(report.folded.snapshots[0]);
    expect(report.folded.events).toBeLessThan(fromZero.folded.events);
    const summary = (r: typeof report) =>
      r.steps.map((s) => [s.input.seq, s.recorded.map((d) => d.seq), s.rederived.map((d) => d.type), s.difference]);
    expect(summary(report)).toEqual(summary(fromZero));
    await store.close();
  });
});
