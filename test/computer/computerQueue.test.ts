import { describe, expect, it, vi } from 'vitest';
import type { BoardClaims } from '../../apps/computer/claimConsumer.ts';
import { ComputerQueue } from '../../apps/computer/computerQueue.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { openTempStore, tempDbPath } from '../support/tempStore.ts';

/** The board, scripted: each run's claim answers in order (then 200), and a count of calls. */
class ScriptedBoard implements BoardClaims {
  readonly calls: string[] = [];
  constructor(private readonly script: Record<string, { status: number; body?: unknown }[]> = {}) {}
  async claim(runId: string) {
    this.calls.push(runId);
    return (
      this.script[runId]?.shift() ?? {
        status: 200,
        body: {
          run: { run_id: runId, lane: 'A', prompt: 'say hi', agent_id: null, timeout_s: null },
          run_token: 'secret',
          skills: [{ key: 'writing', files: {} }],
        },
      }
    );
  }
}

const BUSY = { status: 409, body: { detail: { error: 'conversation_busy' } } };

function frame(clock: FakeClock, runId: string, lane: string): NewEventOf<'frame.received'> {
  return { stream: `c1/lane:${lane}`, type: 'frame.received', data: { frameId: `f-${runId}`, kind: 'run.requested', runId, lane }, at: clock.now() };
}

async function startQueue(store: EventStore, clock: FakeClock, board: BoardClaims, acks: string[] = []) {
  const system = startActorSystem({ onError: () => {} });
  const queue = new ComputerQueue(system, store, clock, 'c1', board, {
    acknowledge: (frameId, status) => acks.push(`${frameId} ${status}`),
  });
  await queue.start();
  return {
    queue,
    stop: () => {
      queue.stop();
      stopSystem(system);
    },
  };
}

describe('the computer queue actor, on a real log', () => {
  it('queues frames, claims through the outbox, parks a busy run and claims it again when its timer fires', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const board = new ScriptedBoard({ a2: [BUSY] });
    const acks: string[] = [];
    const { queue, stop } = await startQueue(store, clock, board, acks);
    await queue.input({ stream: 'c1/computer:c1', type: 'computer.configured', data: { slots: 2, loginCapacity: {} }, at: clock.now() });

    await queue.input(frame(clock, 'a1', 'A'));
    await queue.input(frame(clock, 'a2', 'B'));
    await vi.waitFor(async () => expect((await queue.state()).runs.a2?.busyWaits).toBe(1), { timeout: 5000 });
    expect(acks).toEqual(['f-a1 202', 'f-a2 202']);
    expect((await queue.state()).runs.a1?.status).toBe('running');

    clock.advance(30_000);
    await vi.waitFor(async () => expect((await queue.state()).runs.a2?.status).toBe('running'), { timeout: 5000 });
    expect(board.calls.sort()).toEqual(['a1', 'a2', 'a2']);
    stop();

    const replay = await replayLog(store, deciders);
    expect(replay).toMatchObject({ ok: true });
  });

  it('resumes from the log after a restart: same queue, no claim performed twice', async () => {
    const path = tempDbPath();
    const clock = new FakeClock();
    const board = new ScriptedBoard();
    const first = await openTempStore(path);
    const one = await startQueue(first, clock, board);
    await one.queue.input({ stream: 'c1/computer:c1', type: 'computer.configured', data: { slots: 1, loginCapacity: {} }, at: clock.now() });
    await one.queue.input(frame(clock, 'a1', 'A'));
    await one.queue.input(frame(clock, 'b1', 'B'));
    await vi.waitFor(async () => expect((await one.queue.state()).runs.a1?.status).toBe('running'), { timeout: 5000 });
    const before = await one.queue.state();
    one.stop();

    const second = await openTempStore(path);
    const two = await startQueue(second, clock, board);
    expect(await two.queue.state()).toEqual(before);
    await two.queue.drainClaims();
    expect(board.calls).toEqual(['a1']);
    two.stop();
  });
});
