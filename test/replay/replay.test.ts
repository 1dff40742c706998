import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../events/catalog.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { openSqliteStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { counterDecider } from '../fixtures/counter/counterDecider.ts';
import { type CounterLogEvent, counterCodec, withCounters } from '../fixtures/counter/counterEvents.ts';
import { CounterActor, writeCounterHistory } from '../fixtures/counter/counterLog.ts';
import { counterRegistry } from '../fixtures/counter/counterRegistry.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { countersProjection } from '../fixtures/counter/countersProjection.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDbPath } from '../support/tempStore.ts';

/** A consistent copy of a closed log (the WAL folded in), in which `edit` runs with the triggers dropped. */
function copyAndEdit(path: string, edit: (db: Database.Database) => void): string {
  const copy = path.replace(/\.db$/, '-edited.db');
  const source = new Database(path, { readonly: true });
  try {
    source.prepare('VACUUM INTO ?').run(copy);
  } finally {
    source.close();
  }
  const db = new Database(copy);
  try {
    db.exec('DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;');
    edit(db);
  } finally {
    db.close();
  }
  return copy;
}

async function givenCounterHistory(): Promise<{ path: string; log: DomainEvent[] }> {
  const path = tempDbPath();
  const store = await openCounterStore(path);
  await writeCounterHistory(store);
  const log = await store.readAll(0, 1_000);
  await store.close();
  return { path, log };
}

function seqOf(log: readonly CounterLogEvent[], stream: string, type: string, total: number): number {
  const event = log.find((e) => e.stream === stream && e.type === type && (e.data as { total: number }).total === total);
  if (!event) throw new Error(`no ${type} ${total} in ${stream}`);
  return event.seq;
}

describe('replay: every recorded decision re-derived from its input', () => {
  it('given a history written by decideAndAppend, then it holds bumps, milestones and refusals, each decision caused by its input', async () => {
    const { log } = await givenCounterHistory();

    expect(log.map((e) => e.type)).toEqual(
      expect.arrayContaining(['counter.bump.requested', 'counter.bumped', 'counter.milestone.reached', 'counter.bump.refused']),
    );
    for (const event of withCounters(log)) {
      if (event.type === 'counter.bump.requested') expect(event.cause).toBeNull();
      else expect(log.find((e) => e.seq === event.cause)).toMatchObject({ type: 'counter.bump.requested', stream: event.stream, at: event.at });
    }
  });

  it('given an untouched history, when replayed, then every decision agrees, in process and through `runledger replay`', async () => {
    const { path, log } = await givenCounterHistory();
    const store = await openCounterStore(path);

    const report = await replayLog(store, [counterDecider], { codec: counterCodec });

    const inputs = log.filter((e) => e.cause === null).length;
    expect(report).toEqual({ ok: true, inputs, decisions: log.length - inputs, lastSeq: log.length });
    await store.close();
    const cli = await runInProcess(['replay', '--db', path], { registry: counterRegistry });
    expect(cli.status).toBe(0);
    expect(cli.stdout).toContain(`✓ ${inputs} inputs re-decided, ${log.length - inputs} recorded decisions agree (through seq ${log.length})`);
  });

  it('given a copy where one recorded decision was edited, when replayed, then `runledger replay` exits 1 naming that seq', async () => {
    const { path, log } = await givenCounterHistory();
    const edited = seqOf(log, 'counter:a', 'counter.bumped', 12);
    const copy = copyAndEdit(path, (db) => db.prepare(`update events set data = '{"total":13}' where seq = ?`).run(edited));

    const human = await runInProcess(['replay', '--db', copy], { registry: counterRegistry });
    const json = await runInProcess(['replay', '--db', copy, '--json'], { registry: counterRegistry });

    expect(human.status).toBe(1);
    expect(human.stdout).toContain(`✗ seq ${edited}: the recorded decision differs from the one re-derived (decider counter, scope counter:a)`);
    // The recorded and the re-derived decision side by side, and where they differ.
    expect(human.stdout).toContain('decision 1 of 2 (the first that differs): ✗ data.total: recorded 13, re-derived 12');
    expect(human.stdout).toMatch(/recorded {4}seq \d+ .* counter\.bumped {2}\{"total":13\}/);
    expect(human.stdout).toMatch(/re-derived {2}seq – .* counter\.bumped {2}\{"total":12\}/);
    expect(human.stdout).toContain('decision 2 of 2: ✓ agrees');
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      seq: edited,
      kind: 'differs',
      index: 0,
      detail: 'data.total: recorded 13, re-derived 12',
      decider: 'counter',
      input: { seq: edited - 1, type: 'counter.bump.requested' },
      recorded: [{ seq: edited, data: { total: 13 } }, { type: 'counter.milestone.reached' }],
      rederived: [{ data: { total: 12 } }, { type: 'counter.milestone.reached' }],
    });
  });

  it('given `replay --until SEQ --json`, then it prints the projections as of SEQ', async () => {
    const { path, log } = await givenCounterHistory();
    const until = seqOf(log, 'counter:a', 'counter.bumped', 12);

    const cli = await runInProcess(['replay', '--db', path, '--until', String(until), '--json'], { registry: counterRegistry });

    expect(cli.status).toBe(0);
    const printed = JSON.parse(cli.stdout) as { ok: boolean; lastSeq: number; projections: Record<string, unknown> };
    const expected = log.filter((e) => e.seq <= until).reduce(countersProjection.evolve, countersProjection.initial());
    expect(printed).toMatchObject({ ok: true, lastSeq: until });
    expect(printed.projections.counters).toEqual(expected);
    expect(expected).toEqual({ a: 12, b: 7 });
  });

  it('given --until at an input or inside its append, when replayed, then that input is judged on all its decisions, not on the cut', async () => {
    const { path, log } = await givenCounterHistory();
    const store = await openCounterStore(path);
    const input = seqOf(log, 'counter:a', 'counter.bumped', 12) - 1;

    for (const until of [input, input + 1, input + 2]) {
      expect(await replayLog(store, [counterDecider], { until, codec: counterCodec })).toMatchObject({ ok: true, lastSeq: until });
    }
  });

  it('given --until inside an append whose later decision was edited, when replayed, then the edit past the cut is still found', async () => {
    const { path, log } = await givenCounterHistory();
    const bumped = seqOf(log, 'counter:a', 'counter.bumped', 12);
    const copy = copyAndEdit(path, (db) => db.prepare(`update events set data = '{"total":11}' where seq = ?`).run(bumped + 1));
    const store = await openCounterStore(copy);

    expect(await replayLog(store, [counterDecider], { until: bumped, codec: counterCodec })).toMatchObject({ ok: false, seq: bumped + 1 });
  });

  it('given a copy where a refusal reason was edited, when replayed, then the refusal is the first difference', async () => {
    const { path, log } = await givenCounterHistory();
    const refused = withCounters(log).find((e) => e.type === 'counter.bump.refused')!.seq;
    const copy = copyAndEdit(path, (db) => db.prepare(`update events set data = json_set(data, '$.reason', 'because') where seq = ?`).run(refused));
    const store = await openCounterStore(copy);

    const report = await replayLog(store, [counterDecider], { codec: counterCodec });

    expect(report).toMatchObject({
      ok: false,
      seq: refused,
      recorded: [{ data: { reason: 'because' } }],
      rederived: [{ data: { reason: 'would pass the limit of 20' } }],
    });
  });

  it('given a copy where a recorded decision is missing, when replayed, then the difference is named at its input', async () => {
    const { path, log } = await givenCounterHistory();
    const milestone = withCounters(log).find((e) => e.type === 'counter.milestone.reached' && e.stream === 'counter:b')!;
    const copy = copyAndEdit(path, (db) => db.prepare('delete from events where seq = ?').run(milestone.seq));
    const store = await openCounterStore(copy);

    const report = await replayLog(store, [counterDecider], { codec: counterCodec });

    expect(report).toMatchObject({ ok: false, seq: milestone.cause, rederived: [{ type: 'counter.bumped' }, { type: 'counter.milestone.reached' }] });
  });

  it('given a decision recorded at another time than its input, when replayed, then it differs (time is part of the decision)', async () => {
    const { path, log } = await givenCounterHistory();
    const bumped = seqOf(log, 'counter:b', 'counter.bumped', 7);
    const copy = copyAndEdit(path, (db) => db.prepare('update events set at = at + 1 where seq = ?').run(bumped));
    const store = await openCounterStore(copy);

    expect(await replayLog(store, [counterDecider], { codec: counterCodec })).toMatchObject({ ok: false, seq: bumped });
  });

  it('given a decision whose cause is not the input before it, when replayed, then it is reported as a difference', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    const actor = new CounterActor(store);
    const first = await actor.bump('a', 1, 10);
    await actor.bump('a', 1, 10);
    await store.append({
      expected: { 'counter:a': 'any' },
      events: [{ stream: 'counter:a', type: 'counter.bumped', data: { total: 1 }, at: first.input.at, cause: first.input.seq }],
    });

    expect(await replayLog(store, [counterDecider], { codec: counterCodec })).toMatchObject({ ok: false, seq: 5, decider: '?' });
  });

  it('given a store opened on a VACUUM INTO copy, then the copy reads the same as the original', async () => {
    const { path, log } = await givenCounterHistory();
    const copy = copyAndEdit(path, () => {});
    const store = await openSqliteStore(copy, { codec: counterCodec });
    try {
      expect(await store.readAll(0, 1_000)).toEqual(log);
    } finally {
      await store.close();
    }
  });
});
