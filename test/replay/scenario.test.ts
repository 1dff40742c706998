import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../events/catalog.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayEntity } from '../../replay/replayEntity.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { replayUntil } from '../../replay/replayUntil.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { runledger } from '../support/processes.ts';
import { openScenario, scenarioCopy, seqOf, tamperedScenario } from './scenarioLog.ts';

/**
 * The recorded scenario (two computers, eight runs: see test/fixtures/scenarios/twoComputers.ts) is
 * what an older runledger wrote: every change must still re-derive it, decision for decision.
 */
async function scenarioEvents(): Promise<DomainEvent[]> {
  const store = await openScenario();
  try {
    return await store.readAll(0, 10_000);
  } finally {
    await store.close();
  }
}

// `runledger replay` through the real entry point where its exit status is what is checked first (the
// scenario replayed whole, and tampered); its other calls in this process, through the same dispatch.
describe('replay of the recorded scenario', () => {
  it('re-derives every decision of it, in process and through `runledger replay`', async () => {
    const log = await scenarioEvents();
    const store = await openScenario();
    const report = await replayLog(store, deciders);
    await store.close();

    const inputs = log.filter((e) => e.cause === null).length;
    expect(report).toEqual({ ok: true, inputs, decisions: log.length - inputs, lastSeq: log.length });
    const cli = runledger(['replay', '--db', scenarioCopy()]);
    expect(cli.stderr).toBe('');
    expect(cli.status).toBe(0);
    expect(cli.stdout.trim()).toBe(`✓ ${inputs} inputs re-decided, ${log.length - inputs} recorded decisions agree (through seq ${log.length})`);
  });

  it('`--until SEQ` prints every projection as of SEQ, equal to a fold from seq 0, with the decisions up to it re-derived', async () => {
    const log = await scenarioEvents();
    const parked = seqOf(log, 'run.parked', 'r4');

    const cli = await runInProcess(['replay', '--db', scenarioCopy(), '--until', String(parked), '--json']);

    expect(cli.status).toBe(0);
    const printed = JSON.parse(cli.stdout) as {
      ok: boolean;
      lastSeq: number;
      verifiedFrom: number;
      inputs: number;
      projections: Record<string, unknown>;
    };
    expect(printed).toMatchObject({ ok: true, lastSeq: parked, verifiedFrom: 0 });
    expect(printed.inputs).toBe(log.filter((e) => e.seq <= parked && e.cause === null).length);
    for (const projection of projections) {
      const folded = log.filter((e) => e.seq <= parked).reduce((s, e) => projection.evolve(s, e), projection.initial());
      expect(printed.projections[projection.name], projection.name).toEqual(JSON.parse(JSON.stringify(folded)));
    }
    expect(printed.projections.queue).toMatchObject({
      c1: { runs: { r4: { status: 'waiting', busyWaits: 1 } } },
      c2: { runs: { r3: { status: 'running' } } },
    });
  });

  it('`--run ID` re-decides each input that concerns the run, each against its scope folded from the whole log', async () => {
    const log = await scenarioEvents();
    const store = await openScenario();
    const report = (await replayEntity(store, deciders, 'run', 'r4'))!;
    await store.close();

    expect(report.ok).toBe(true);
    expect(report.steps.every((s) => s.difference === null)).toBe(true);
    const inputs = report.steps.map((s) => `${s.decider} ${s.input.type}`);
    expect(inputs).toContain('queue claim.answered');
    // Not r4's own event: r3's completion on the board is what resent r4's frame.
    const resend = report.steps.find((s) =>
      s.recorded.some(
        (d) =>
          d.type === 'board.run.offered' &&
          (d.data as { runId: string }).runId === 'r4' &&
          d.cause === s.input.seq &&
          s.input.type === 'board.completion.received',
      ),
    );
    expect(resend?.input.data).toMatchObject({ runId: 'r3' });
    const unpark = report.steps.find((s) => s.input.seq === seqOf(log, 'run.unparked', 'r4') - 2)!;
    expect(unpark.recorded.map((d) => d.type)).toEqual(['frame.acknowledged', 'run.unparked', 'run.claim.started']);
    expect(unpark.rederived.map((d) => d.type)).toEqual(['frame.acknowledged', 'run.unparked', 'run.claim.started']);
    // The queue's state is the computer's: every event of c1's queue before each input was folded.
    expect(report.scopes).toEqual(
      expect.arrayContaining([
        { decider: 'queue', scope: 'c1', from: 0 },
        { decider: 'board', scope: 'board', from: 0 },
        { decider: 'run', scope: 'c1/run:r4', from: 0 },
      ]),
    );
    expect(report.folded).toMatchObject({ from: 0, to: seqOf(log, 'run.ended', 'r4', 'c1/lane:B'), snapshots: [] });

    const cli = await runInProcess(['replay', '--db', scenarioCopy(), '--run', 'r4']);
    expect(cli.status).toBe(0);
    expect(cli.stdout).toMatch(/^run r4: 17 input\(s\) re-decided, 23 recorded decision\(s\) compared, all agree$/m);
    expect(cli.stdout).toContain(
      "compared: each input against its decider's state folded from the log up to it: board (from seq 0), queue c1 (from seq 0), run c1/run:r4 (from seq 0)",
    );
    expect(cli.stdout).toMatch(
      /^✓ seq \d+ {2}2026-03-02 09:00:52\.100Z {2}c1\/lane:B {2}claim\.answered: the board answered the claim: 409 conversation_busy {2}\[queue c1\]$/m,
    );
    expect(cli.stdout).toMatch(
      /^ {4}= seq \d+ {2}c1\/lane:B {2}run\.parked: waits: an earlier turn of its conversation is still open \(until 09:01:22, wait 1\)$/m,
    );
  });

  it('`--session ID` re-decides what concerns a session: its announcement, and the lane remembering it', async () => {
    const store = await openScenario();
    const report = (await replayEntity(store, deciders, 'session', 's-a1'))!;
    await store.close();

    expect(report.ok).toBe(true);
    expect(report.steps.map((s) => [s.input.type, s.recorded.map((d) => d.type)])).toEqual([['run.session.announced', ['lane.session.remembered']]]);
    expect(report.scopes).toEqual([{ decider: 'run', scope: 'c1/run:r1', from: 0 }]);
  });

  it('refuses an unknown run and a malformed id, naming them', async () => {
    const path = scenarioCopy();
    const unknown = await runInProcess(['replay', '--db', path, '--run', 'r99']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('no run "r99"');
    const malformed = await runInProcess(['replay', '--db', path, '--run', '../r1']);
    expect(malformed.status).not.toBe(0);
    expect(malformed.stderr).toContain('"../r1" is not a run or session id');
  });
});

describe('replay of a tampered copy of the scenario', () => {
  it('given a parked run’s wait edited, then `replay` and `replay --run` exit 1 naming its seq, with both decisions side by side', async () => {
    const log = await scenarioEvents();
    const parked = seqOf(log, 'run.parked', 'r4');
    const notBefore = (log.find((e) => e.seq === parked)!.data as { notBefore: number }).notBefore;
    const path = tamperedScenario((db) =>
      db.prepare(`update events set data = json_set(data, '$.notBefore', ?) where seq = ?`).run(notBefore + 60_000, parked),
    );

    const whole = runledger(['replay', '--db', path, '--json']);
    const human = await runInProcess(['replay', '--db', path]);
    const run = await runInProcess(['replay', '--db', path, '--run', 'r4', '--json']);

    expect(whole.status).toBe(1);
    expect(JSON.parse(whole.stdout)).toMatchObject({
      ok: false,
      seq: parked,
      kind: 'differs',
      decider: 'queue',
      scope: 'c1',
      input: { seq: parked - 1, type: 'claim.answered', actor: 'recorder:1' },
      detail: `data.notBefore: recorded ${notBefore + 60_000}, re-derived ${notBefore}`,
      recorded: [{ seq: parked, type: 'run.parked', data: { notBefore: notBefore + 60_000 } }],
      rederived: [{ type: 'run.parked', data: { notBefore } }],
    });
    expect(human.status).toBe(1);
    expect(human.stdout).toContain(`✗ seq ${parked}: the recorded decision differs from the one re-derived (decider queue, scope c1)`);
    expect(human.stdout).toMatch(/input {5}seq \d+ .* claim\.answered/);
    expect(human.stdout).toContain(`✗ data.notBefore: recorded ${notBefore + 60_000}, re-derived ${notBefore}`);
    expect(run.status).toBe(1);
    const entity = JSON.parse(run.stdout) as { ok: boolean; difference: { seq: number }; steps: { input: { seq: number }; difference: unknown }[] };
    expect(entity.ok).toBe(false);
    expect(entity.difference.seq).toBe(parked);
    expect(entity.steps.filter((s) => s.difference !== null).map((s) => s.input.seq)).toEqual([parked - 1]);
  });

  it('given the same edit, then a run it does not concern still replays, and `--until` judges only what it reaches', async () => {
    const log = await scenarioEvents();
    const parked = seqOf(log, 'run.parked', 'r4');
    const path = tamperedScenario((db) => db.prepare(`update events set data = json_set(data, '$.busyWaits', 2) where seq = ?`).run(parked));
    const store = await openScenario(path);

    expect((await replayEntity(store, deciders, 'run', 'r2'))!.ok).toBe(true);
    expect(await replayUntil(store, deciders, projections, parked - 2)).toMatchObject({ ok: true });
    // At the input itself: its decisions past the cut are judged with it.
    expect(await replayUntil(store, deciders, projections, parked - 1)).toMatchObject({ ok: false, difference: { seq: parked, kind: 'differs' } });
    await store.close();
  });

  it('given a decision deleted, then it is missing at its input; given one added, then it is extra', async () => {
    const log = await scenarioEvents();
    const skipped = seqOf(log, 'run.skipped', 'r1');
    const deleted = tamperedScenario((db) => db.prepare('delete from events where seq = ?').run(skipped));
    // The event after it becomes a second decision of the same input.
    const added = tamperedScenario((db) =>
      db
        .prepare(
          `update events set stream = 'c2/lane:A', version = 1000, type = 'run.withdrawn', data = '{"runId":"r1","reason":"withdrawn"}', cause = ? where seq = ?`,
        )
        .run(skipped - 1, skipped + 1),
    );
    const a = await openScenario(deleted);
    const b = await openScenario(added);

    expect(await replayLog(a, deciders)).toMatchObject({ ok: false, kind: 'missing', seq: skipped - 1, rederived: [{ type: 'run.skipped' }] });
    expect(await replayLog(b, deciders)).toMatchObject({
      ok: false,
      kind: 'extra',
      seq: skipped + 1,
      recorded: [{ type: 'run.skipped' }, { type: 'run.withdrawn' }],
    });
    await Promise.all([a.close(), b.close()]);
  });

  it('given a decision written with its fields in another order, or as JSON that is not even JSON, then order does not matter and bad JSON is a difference', async () => {
    const log = await scenarioEvents();
    const parked = seqOf(log, 'run.parked', 'r4');
    const data = log.find((e) => e.seq === parked)!.data as Record<string, unknown>;
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(data).reverse()));
    const same = tamperedScenario((db) => db.prepare('update events set data = ? where seq = ?').run(reordered, parked));
    const broken = tamperedScenario((db) =>
      db.exec(`DROP INDEX events_run_id; DROP INDEX events_session_id; update events set data = '{"runId":' where seq = ${parked}`),
    );
    const a = await openScenario(same);
    const b = await openScenario(broken);

    expect(reordered).not.toBe(JSON.stringify(data));
    expect(await replayLog(a, deciders)).toMatchObject({ ok: true });
    expect(await replayLog(b, deciders)).toMatchObject({ ok: false, kind: 'differs', seq: parked });
    await Promise.all([a.close(), b.close()]);
  });

  it('given a decision whose data no longer reads as its type, then it is a difference, not a crash', async () => {
    const log = await scenarioEvents();
    const skipped = seqOf(log, 'run.skipped', 'r1');
    const path = tamperedScenario((db) => db.prepare(`update events set data = '{"runId":"r1"}' where seq = ?`).run(skipped));
    const store = await openScenario(path);

    expect(await replayLog(store, deciders)).toMatchObject({
      ok: false,
      kind: 'differs',
      seq: skipped,
      detail: expect.stringMatching(/^data: does not read as run\.skipped \(reason: /),
    });
    await store.close();
  });

  it('given a timer input moved before the wait it ends, then it is reported: its decider ignores it, and an ignored input is never recorded', async () => {
    const log = await scenarioEvents();
    const timer = log.find((e) => e.type === 'timer.fired')!;
    const path = tamperedScenario((db) => db.prepare('update events set at = at - 1500 where seq = ?').run(timer.seq));
    const store = await openScenario(path);

    const report = await replayLog(store, deciders);

    expect(report).toMatchObject({ ok: false, kind: 'ignored', seq: timer.seq, decider: 'queue', scope: 'c1' });
    await store.close();
  });
});
