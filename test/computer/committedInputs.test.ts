/**
 * Actors talk by the log (docs/rules.md#actors, issue 16): a decision one actor committed is the next actor's input,
 * not re-recorded as an input of its own. The queue's `run.claimed` starts the run (no
 * `run.handed.over`), carrying what the host read for the start (budget, lane's session). A crash
 * between the first actor's commit and the second's decision leaves the decision to the next life, once.
 */
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import type { DomainEvent } from '../../events/catalog.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayEntity } from '../../replay/replayEntity.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { runStream } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { startComputer } from '../support/standInComputer.ts';
import { openTempStore, tempDbPath } from '../support/tempStore.ts';

async function all(store: EventStore): Promise<DomainEvent[]> {
  return store.readAll(0, 100_000);
}

async function settledOn(store: EventStore, runId: string): Promise<void> {
  await vi.waitFor(async () => expect((await store.readStream(runStream(runId))).at(-1)?.type).toBe('run.settled'), { timeout: 10_000 });
}

describe("a run started from its queue's committed claim", () => {
  it('given a granted claim, then the run starts from `run.claimed`, which carries its budget and its lane session; nothing re-records it, and the log replays', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'A', prompt: 'p', timeoutS: 90 });
    const { frame } = await startComputer(store, clock, board, 'echo ok');

    await frame('run.requested', 'r1', 'A');
    await settledOn(store, 'r1');
    const log = await all(store);
    expect(log.map((e) => e.type)).not.toContain('run.handed.over');
    const answer = log.find((e) => e.type === 'claim.answered')!;
    expect(answer.data).toMatchObject({ start: { budgetS: 90, laneSession: null } });
    const claimed = log.find((e) => e.type === 'run.claimed')!;
    expect(claimed.data).toMatchObject({ start: { budgetS: 90, laneSession: null } });
    const [first] = await store.readStream(runStream('r1'));
    expect(first).toMatchObject({ type: 'run.execution.requested', cause: claimed.seq, data: { budgetS: 90, deadlineAt: claimed.at + 90_000 } });
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
  });

  it("given the daemon stopped between the queue's commit of `run.claimed` and the run's decision, then the next life starts the run, once, and the log replays", async () => {
    const path = tempDbPath();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'A', prompt: 'p' });
    const before = await openTempStore(path);
    const first = await startComputer(before, clock, board, 'echo ok');
    // The crash comes right after the queue's commit: its run never hears of it in this life.
    vi.spyOn(first.computer.runs, 'claimed').mockImplementation(async () => {});
    await first.frame('run.requested', 'r1', 'A');
    await vi.waitFor(async () => expect((await all(before)).map((e) => e.type)).toContain('run.claimed'), { timeout: 10_000 });
    first.crash();
    expect(await before.readStream(runStream('r1'))).toEqual([]);

    const after = await openTempStore(path);
    await startComputer(after, clock, board, 'echo ok');
    await settledOn(after, 'r1');
    const log = await all(after);
    const claimed = log.find((e) => e.type === 'run.claimed')!;
    expect(log.filter((e) => e.type === 'run.execution.requested')).toMatchObject([{ cause: claimed.seq }]);
    expect(log.filter((e) => e.type === 'run.process.began')).toHaveLength(1);
    expect(board.callsOf('r1', 'complete')).toMatchObject([{ result: { ok: true } }]);
    expect(await replayLog(after, deciders)).toMatchObject({ ok: true });
  });

  it('given an older version claimed it (no `start` on its claim) and stopped before the hand-over, then the next life hands it over by an input of its own, as that version did, and the log replays', async () => {
    const path = tempDbPath();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'A', prompt: 'p' });
    const before = await openTempStore(path);
    const first = await startComputer(before, clock, board, 'echo ok');
    // An older version recorded no start with the answer, so its queue's claim carries none.
    vi.spyOn(first.computer.runs, 'startOf').mockReturnValue(undefined as never);
    vi.spyOn(first.computer.runs, 'handOver').mockImplementation(async () => {});
    await first.frame('run.requested', 'r1', 'A');
    await vi.waitFor(async () => expect((await all(before)).map((e) => e.type)).toContain('run.claimed'), { timeout: 10_000 });
    first.crash();

    const after = await openTempStore(path);
    await startComputer(after, clock, board, 'echo ok');
    await settledOn(after, 'r1');
    const run = await after.readStream(runStream('r1'));
    expect(run[0]).toMatchObject({ type: 'run.handed.over', cause: null, data: { budgetS: 7200, laneSession: null } });
    expect(run[1]).toMatchObject({ type: 'run.execution.requested', cause: run[0]!.seq });
    expect(run[1]!.data).not.toHaveProperty('budgetS');
    expect(await replayLog(after, deciders)).toMatchObject({ ok: true });
  });
});

describe("a run's end, read by its queue from the run's committed settle", () => {
  it('given a run that settles, then its queue frees the slot and lane from `run.settled` itself, which carries the result: no `run.execution.ended`, and the log replays', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'A', prompt: 'p' }).offer('r2', { lane: 'A', prompt: 'q' });
    const { frame } = await startComputer(store, clock, board, 'echo ok');

    await frame('run.requested', 'r1', 'A');
    await frame('run.requested', 'r2', 'A');
    await settledOn(store, 'r1');
    await settledOn(store, 'r2');
    const log = await all(store);
    expect(log.map((e) => e.type)).not.toContain('run.execution.ended');
    const settled = log.find((e) => e.type === 'run.settled' && e.data.runId === 'r1')!;
    expect(settled.data).toMatchObject({ reported: true, result: { ok: true } });
    const ended = log.filter((e) => e.type === 'run.ended' && e.data.runId === 'r1');
    expect(ended).toMatchObject([{ stream: 'c1/lane:A', cause: settled.seq, data: { ok: true, reason: { code: 'finished' } } }]);
    // The lane's next turn is claimed by the same decision: it shares the settle as its cause.
    expect(log.find((e) => e.type === 'run.claim.started' && e.data.runId === 'r2')).toMatchObject({ cause: settled.seq });
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
    // `replay --run` re-decides them too: each message where its decisions were taken.
    const r1 = (await replayEntity(store, deciders, 'run', 'r1'))!;
    expect(r1.ok).toBe(true);
    expect(r1.steps.map((step) => `${step.decider} ${step.input.type} → ${step.recorded.map((e) => e.type).join(', ')}`)).toEqual(
      expect.arrayContaining(['run run.claimed → run.execution.requested', 'queue run.settled → run.ended, run.claim.started']),
    );
    expect(r1.steps.every((step) => step.difference === null)).toBe(true);
  });

  it("given the daemon stopped between the run's commit of `run.settled` and its queue's decision, then the next life frees the lane from that settle, once, and the lane's next turn runs", async () => {
    const path = tempDbPath();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'A', prompt: 'p' }).offer('r2', { lane: 'A', prompt: 'q' });
    const before = await openTempStore(path);
    const first = await startComputer(before, clock, board, 'echo ok');
    // The crash comes right after the run's settle: its queue never hears of it in this life.
    vi.spyOn(first.computer.queue, 'message').mockImplementation(async () => ({ ok: true, state: null as never, input: null, decisions: [] }));
    await first.frame('run.requested', 'r1', 'A');
    await first.frame('run.requested', 'r2', 'A');
    await settledOn(before, 'r1');
    first.crash();
    expect((await all(before)).filter((e) => e.type === 'run.ended')).toEqual([]);

    const after = await openTempStore(path);
    await startComputer(after, clock, board, 'echo ok');
    await settledOn(after, 'r2');
    const log = await all(after);
    const settled = log.find((e) => e.type === 'run.settled' && e.data.runId === 'r1')!;
    expect(log.filter((e) => e.type === 'run.ended' && e.data.runId === 'r1')).toMatchObject([{ cause: settled.seq, data: { ok: true } }]);
    expect(board.callsOf('r1', 'complete')).toHaveLength(1);
    expect(board.callsOf('r2', 'complete')).toMatchObject([{ result: { ok: true } }]);
    expect(await replayLog(after, deciders)).toMatchObject({ ok: true });
  });

  it("given a message's decision changed in the log, then replay names it: the settle's queue decision is re-derived where it was taken", async () => {
    const path = tempDbPath();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'A', prompt: 'p' });
    const store = await openTempStore(path);
    const { frame, crash } = await startComputer(store, clock, board, 'echo ok');
    await frame('run.requested', 'r1', 'A');
    await vi.waitFor(async () => expect((await all(store)).map((e) => e.type)).toContain('run.ended'), { timeout: 10_000 });
    crash();
    const ended = (await all(store)).find((e) => e.type === 'run.ended')!;
    await store.close();
    const db = new Database(path);
    // As a tamperer would: the append-only triggers dropped first.
    db.exec('DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;');
    // What it decided (its `ok`), not its wording: replay sets a reason's words aside (docs/replay-and-audit.md#what-replay-compares).
    db.prepare(`UPDATE events SET data = json_set(data, '$.ok', json('false')) WHERE seq = ?`).run(ended.seq);
    db.close();

    const tampered = await openTempStore(path);
    const report = await replayLog(tampered, deciders);
    expect(report).toMatchObject({ ok: false, seq: ended.seq, kind: 'differs', decider: 'queue' });
    await tampered.close();
  });
});
