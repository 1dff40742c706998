import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROGRESS_BEAT_MS } from '../../apps/computer/computerRuns.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { until } from '../run/execution/agents.ts';
import { claudeAgent, startRuns, waitForEvent } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore } from '../support/tempStore.ts';

const CLAUDE_USAGE = { cost_usd: 0.0123, input_tokens: 12, output_tokens: 7, cached_input_tokens: 3000 };

/** A claimed run's usage and progress on its way to the board (docs/rules.md#wire-and-cli), with the Claude Code stand-in. */
describe("a run's usage and progress, sent by its computer", () => {
  it('usage goes with the completion; a board older than usage refuses it (422), and the run is reported without it', async () => {
    const store = await openTempStore();
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'hello' }).offer('r2', { lane: 'M', prompt: 'hello' });
    const { claimAndHandOver } = await startRuns(store, new FakeClock(), board, { exec: claudeAgent('claude-cli.sh') });
    await claimAndHandOver('r1');
    await waitForEvent(store, 'r1', 'run.settled');
    expect(board.callsOf('r1', 'complete')).toMatchObject([{ result: { ok: true }, usage: CLAUDE_USAGE }]);

    board.predateUsage();
    await claimAndHandOver('r2');
    expect((await waitForEvent(store, 'r2', 'run.settled')).data).toMatchObject({ reported: true });
    const calls = board.callsOf('r2', 'complete');
    expect(calls).toMatchObject([{ usage: CLAUDE_USAGE }, { result: { ok: true } }]);
    expect(calls[1]).not.toHaveProperty('usage');
  });

  it('a change of progress is heartbeated at once, then at most once a second with the latest line; nothing of it is recorded', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new StandInBoard().offer('r1', { lane: 'L', prompt: 'work in STEPS=3' });
    board.failCompletions('r1', 503);
    const { claimAndHandOver, workspaceRoot } = await startRuns(store, clock, board, { exec: claudeAgent('claude-cli.sh') });
    const progressBeats = () => board.callsOf('r1', 'heartbeat').map((c) => (c.call === 'heartbeat' ? c.progress : undefined));
    await claimAndHandOver('r1');
    // The first change goes at once, with no heartbeat due for 30 s.
    await until(() => progressBeats().length === 1, 10_000, 'the first progress heartbeat');
    expect(progressBeats()).toEqual(['Bash: echo step 1']);

    // Steps 2 and 3 and the answer come within the same second (the clock does not move): they wait, and the latest goes.
    for (const gate of ['gate-1', 'gate-2', 'gate-3']) writeFileSync(join(workspaceRoot, 'L', gate), '');
    await waitForEvent(store, 'r1', 'run.process.exited');
    // Its first completion is refused (503): it stays unsettled, heartbeated, and is retried a second later.
    await waitForEvent(store, 'r1', 'run.completion.retrying');
    expect(progressBeats()).toEqual(['Bash: echo step 1']);
    clock.advance(PROGRESS_BEAT_MS);
    await until(() => progressBeats().length === 2, 10_000, 'the second progress heartbeat');
    expect(progressBeats()).toEqual(['Bash: echo step 1', 'says: turn 1 (claude-sonnet-4-5): work in STEPS=3']);

    await waitForEvent(store, 'r1', 'run.settled');
    const log = JSON.stringify(await store.readAll(0, 10_000));
    expect(log).not.toContain('echo step');
  });
});
