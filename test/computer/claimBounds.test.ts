/**
 * A claim answer is read at the edge (docs/rules.md#computer-behaviour, "Bounds"): a `run.timeout_s` that is not an
 * integer 0..2,592,000 is refused naming the field. The board granted the run, so it is the computer's
 * to end: it is completed as failed with that reason, never left for the board's lease to reap, and
 * its slot goes to the next run.
 */

import { describe, expect, it, vi } from 'vitest';
import { handledOf } from '../../actors/lane/handledRun.ts';
import { readClaimAnswer } from '../../apps/computer/claimConsumer.ts';
import { Computer } from '../../apps/computer/computer.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import { fixtureAgent } from '../support/computerRuns.ts';
import { StandInBoard } from '../support/standInBoard.ts';
import { openTempStore, tempDir } from '../support/tempStore.ts';

const answer = (timeout_s: unknown) => ({ run: { run_id: 'r1', lane: 'A', prompt: 'p', agent_id: null, timeout_s }, run_token: 'tok', skills: [] });

describe("a claim answer's run.timeout_s", () => {
  it.each([0, 1, 7_200, 2_592_000, null, undefined])('%s is taken', (value) => {
    const read = readClaimAnswer('r1', answer(value));
    expect(read).toMatchObject({ ok: true, claim: { run: { timeoutS: value ?? null } } });
  });

  it.each([-1, 1.5, 2_592_001, 1e308, 2_147_484_000, '60', Number.NaN])('%s is refused naming run.timeout_s', (value) => {
    const read = readClaimAnswer('r1', answer(value));
    expect(read).toMatchObject({ ok: false, runToken: 'tok', problem: expect.stringMatching(/^run\.timeout_s: /) });
  });

  it('an answer without a run token is refused naming run_token', () => {
    expect(readClaimAnswer('r1', { run: { prompt: 'p' } })).toMatchObject({
      ok: false,
      runToken: null,
      problem: expect.stringMatching(/^run_token: /),
    });
  });
});

describe('a granted claim whose answer is refused', () => {
  it('is recorded naming the field, completed as failed with that reason, and frees its slot for the next run', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const system = startActorSystem({ onError: () => {} });
    const board = new StandInBoard().offer('r1', { lane: 'A', prompt: 'p', timeoutS: 1e308 }).offer('r2', { lane: 'A', prompt: 'hello' });
    const computer = new Computer({
      system,
      store,
      clock,
      computer: 'c1',
      server: 'http://127.0.0.1:9',
      token: 't',
      exec: fixtureAgent('echo.sh'),
      workspaceRoot: tempDir(),
      board,
    });
    await computer.start();
    try {
      const frame = (runId: string) => ({
        stream: 'c1/lane:A',
        type: 'frame.received' as const,
        data: { frameId: `f-${runId}`, kind: 'run.requested', runId, lane: 'A' },
        at: clock.now(),
      });
      await computer.queue.input(frame('r1'));
      await computer.queue.input(frame('r2'));
      await vi.waitFor(() => expect(board.callsOf('r2', 'complete')).toHaveLength(1), { timeout: 10_000 });
      expect(board.callsOf('r1', 'complete')).toEqual([
        {
          call: 'complete',
          runId: 'r1',
          token: board.tokenOf('r1'),
          result: { ok: false, error: expect.stringMatching(/claim answer.*run\.timeout_s/) },
        },
      ]);
      const answered = (await store.readStream('c1/lane:A')).find((e) => e.type === 'claim.answered' && e.data.runId === 'r1');
      expect(answered?.data).toMatchObject({ status: 200, invalid: expect.stringMatching(/^run\.timeout_s: /) });
      expect(board.callsOf('r1', 'reply')).toEqual([]);
      await vi.waitFor(async () => expect((await computer.queue.state()).runs).toEqual({}), { timeout: 5_000 });
      for (const runId of ['r1', 'r2']) expect(handledOf(await store.readEntity(`run:${runId}`), 'c1', runId)).toBe('ended');
    } finally {
      computer.stop();
      stopSystem(system);
    }
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
  });
});
