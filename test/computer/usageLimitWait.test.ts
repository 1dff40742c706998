/**
 * A run waiting out its login's usage limit on its computer (docs/rules.md#computer-behaviour, "Execution" and
 * "Heartbeats"), with the Claude Code stand-in and a fake clock: it is not completed, it is
 * heartbeated all the while (still claimed), its queue is told the agent's words and reset, and once
 * given a slot again it runs the same turn in the session its agent announced and its reply is posted.
 * A cancel while it waits completes it with the marker, and nothing runs again.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { CANCELLED_MARKER } from '../../actors/run/runState.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { until } from '../run/execution/agents.ts';
import { claudeAgent, runStream, startRuns, waitForEvent } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { startComputer as startStandIn } from '../support/standInComputer.ts';
import { openTempStore, tempDir } from '../support/tempStore.ts';

/** The stand-in keeps its limit in its home (here the lane's workspace): limited until `until` (ms). */
function limitUntil(workspaceRoot: string, lane: string, until: number): void {
  mkdirSync(join(workspaceRoot, lane), { recursive: true });
  writeFileSync(join(workspaceRoot, lane, 'claude-limit'), String(until));
}

describe('a run waiting out its usage limit on its computer', () => {
  it('is heartbeated, not completed, while it waits; given a slot again it resumes its session and its reply is posted', async () => {
    const store = await openTempStore();
    const clock = new FakeClock(Date.now());
    const workspaceRoot = tempDir();
    const reset = Date.now() + 3_600_000;
    limitUntil(workspaceRoot, 'L', reset);
    const reported: { runId: string; words: string; resetAt?: number }[] = [];
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'USAGE_LIMIT carry on', timeoutS: 600 });
    const { claimAndHandOver, runs } = await startRuns(store, clock, board, {
      exec: claudeAgent('claude-cli.sh'),
      workspaceRoot,
      heartbeatMs: 30_000,
      limitReached: async (runId, _lane, limit) => void reported.push({ runId, ...limit }),
    });

    await claimAndHandOver('r1');
    const reached = await waitForEvent(store, 'r1', 'run.limit.reached');
    expect(reached.data).toMatchObject({ words: "You've hit your limit · resets 2pm (UTC)", resetAt: Math.ceil(reset / 1000) * 1000 });
    await until(() => reported.length === 1, 5_000, 'the queue was never told');
    expect(reported[0]).toMatchObject({ runId: 'r1', resetAt: reached.data.resetAt });
    expect(runs.liveRuns()).toEqual(['r1']);
    expect(runs.runsToDrain()).toEqual([]);

    // An hour of waiting, heartbeated every 30 s on the fake clock; nothing reaches the board but beats.
    for (let i = 0; i < 4; i++) clock.advance(30_000);
    await until(() => board.callsOf('r1', 'heartbeat').length >= 4, 5_000, 'the waiting run was not heartbeated');
    expect(board.callsOf('r1', 'complete')).toEqual([]);

    limitUntil(workspaceRoot, 'L', 0);
    await runs.limitOver('r1');
    expect((await waitForEvent(store, 'r1', 'run.settled')).data.reported).toBe(true);
    expect(board.callsOf('r1', 'reply')[0]).toMatchObject({ text: 'turn 1 (claude-sonnet-4-5): USAGE_LIMIT carry on' });
    const events = await store.readStream(runStream('r1'));
    const announced = events.find((e) => e.type === 'run.session.announced')?.data.sessionId;
    expect(events.filter((e) => e.type === 'run.process.began').map((e) => e.data.resuming)).toEqual([null, announced]);
    // Every decision re-derived from the recorded inputs, the limit's words and reset included.
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
  });

  it('a run the board reaped while no daemon heartbeated it is not run again when its limit lifts in the next life', async () => {
    const store = await openTempStore();
    const clock = new FakeClock(Date.now());
    const workspaceRoot = tempDir();
    limitUntil(workspaceRoot, 'L', Date.now() + 3_600_000);
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'USAGE_LIMIT carry on' });
    const first = await startRuns(store, clock, board, { exec: claudeAgent('claude-cli.sh'), workspaceRoot });
    await first.claimAndHandOver('r1');
    await waitForEvent(store, 'r1', 'run.limit.reached');
    // The daemon stops; no one heartbeats the run for longer than its lease, and the board reaps it.
    first.crash();
    board.resolve('r1');

    limitUntil(workspaceRoot, 'L', 0);
    const second = await startRuns(store, clock, board, { exec: claudeAgent('claude-cli.sh'), workspaceRoot });
    // Its queue gives it its slot back at the reset.
    await second.runs.limitOver('r1');
    expect((await waitForEvent(store, 'r1', 'run.settled')).data.reported).toBe(false);
    const events = await store.readStream(runStream('r1'));
    expect(events.filter((e) => e.type === 'run.process.began')).toHaveLength(1);
    expect(board.callsOf('r1', 'reply')).toEqual([]);
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
  });

  it('a run the board ended while no daemon ran is resolved by the next life’s first beat: the board is not asked for its token at every beat', async () => {
    const store = await openTempStore();
    const clock = new FakeClock(Date.now());
    const workspaceRoot = tempDir();
    limitUntil(workspaceRoot, 'L', Date.now() + 3_600_000);
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'USAGE_LIMIT carry on' });
    const first = await startRuns(store, clock, board, { exec: claudeAgent('claude-cli.sh'), workspaceRoot, heartbeatMs: 1_000 });
    await first.claimAndHandOver('r1');
    await waitForEvent(store, 'r1', 'run.limit.reached');
    first.crash();
    board.resolve('r1');

    const second = await startRuns(store, clock, board, { exec: claudeAgent('claude-cli.sh'), workspaceRoot, heartbeatMs: 1_000 });
    clock.advance(1_000);
    expect((await waitForEvent(store, 'r1', 'run.settled')).data.reported).toBe(false);
    expect(second.runs.liveRuns()).toEqual([]);
    // Each claim the board refuses is a decision in its log: one, not one a beat for as long as the run waits.
    const claims = board.callsOf('r1', 'claim').length;
    for (let i = 0; i < 5; i++) clock.advance(1_000);
    expect(board.callsOf('r1', 'claim')).toHaveLength(claims);
  });

  it('given its slot back as the daemon begins to drain, then it does not start: it waits, claimed, for the next life', async () => {
    const store = await openTempStore();
    const clock = new FakeClock(Date.now());
    const workspaceRoot = tempDir();
    limitUntil(workspaceRoot, 'L', Date.now() + 3_600_000);
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'USAGE_LIMIT carry on' });
    const { claimAndHandOver, runs } = await startRuns(store, clock, board, { exec: claudeAgent('claude-cli.sh'), workspaceRoot });
    await claimAndHandOver('r1');
    await waitForEvent(store, 'r1', 'run.limit.reached');
    limitUntil(workspaceRoot, 'L', 0);
    runs.beginDrain();
    await runs.limitOver('r1');
    expect(runs.phaseOf('r1')).toBe('limited');
    expect(runs.runsToDrain()).toEqual([]);
    expect((await store.readStream(runStream('r1'))).filter((e) => e.type === 'run.process.began')).toHaveLength(1);
  });

  it('a cancel while it waits completes it with the marker; it never runs again', async () => {
    const store = await openTempStore();
    const clock = new FakeClock(Date.now());
    const workspaceRoot = tempDir();
    limitUntil(workspaceRoot, 'L', Date.now() + 3_600_000);
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'USAGE_LIMIT carry on' });
    const { claimAndHandOver, runs } = await startRuns(store, clock, board, {
      exec: claudeAgent('claude-cli.sh'),
      workspaceRoot,
      heartbeatMs: 1_000,
    });

    await claimAndHandOver('r1');
    await waitForEvent(store, 'r1', 'run.limit.reached');
    board.cancel('r1');
    clock.advance(1_000);
    expect((await waitForEvent(store, 'r1', 'run.settled')).data.reported).toBe(true);
    expect(board.callsOf('r1', 'complete').map((c) => c.call === 'complete' && c.result)).toEqual([{ ok: false, error: CANCELLED_MARKER }]);
    await runs.limitOver('r1');
    const events = await store.readStream(runStream('r1'));
    expect(events.filter((e) => e.type === 'run.process.began')).toHaveLength(1);
  });
});

describe('a computer restarted over a run that waited out its limit', () => {
  async function startComputer(store: EventStore, clock: FakeClock, board: StandInBoard, workspaceRoot: string) {
    const { computer, frame, crash } = await startStandIn(store, clock, board, claudeAgent('claude-cli.sh'), workspaceRoot);
    const stop = () => {
      crash();
      computer.runs.killAll();
    };
    return { computer, offer: (runId: string, lane: string) => frame('run.requested', runId, lane), stop };
  }

  it('given it settled but its queue never heard (a kill between the two), then its slot and lane are freed at the start, not held for ever', async () => {
    const store = await openTempStore();
    const clock = new FakeClock(Date.now());
    const workspaceRoot = tempDir();
    limitUntil(workspaceRoot, 'L', Date.now() + 3_600_000);
    const board = new StandInBoard().offer('a1', { lane: 'L', prompt: 'USAGE_LIMIT carry on' }).offer('a2', { lane: 'M', prompt: 'hello' });
    const first = await startComputer(store, clock, board, workspaceRoot);
    await first.offer('a1', 'L');
    await vi.waitFor(async () => expect((await first.computer.queue.state()).runs.a1?.claimHeld).toBe(true), { timeout: 10_000 });
    first.stop();

    // Cancelled on the board while it waits; its run completes it and settles, and the daemon dies before
    // its queue records the end (here: a run actor alone, whose queue is never told).
    board.cancel('a1');
    const alone = await startRuns(store, clock, board, { exec: claudeAgent('claude-cli.sh'), workspaceRoot, heartbeatMs: 1_000 });
    clock.advance(1_000);
    await waitForEvent(store, 'a1', 'run.settled');
    alone.crash();

    limitUntil(workspaceRoot, 'L', 0);
    const second = await startComputer(store, clock, board, workspaceRoot);
    clock.advance(3_600_000);
    await second.offer('a2', 'M');
    await vi.waitFor(async () => expect((await store.readStream(runStream('a2'))).some((e) => e.type === 'run.settled')).toBe(true), {
      timeout: 10_000,
    });
    expect((await second.computer.queue.state()).runs).toEqual({});
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
  });
});
