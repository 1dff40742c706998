/**
 * The queue keeps no ledger of the runs it handled (issue 16): a frame resent for one of them, in a
 * later life of the daemon, is told apart by what the log says of its run, looked up through the
 * run's index before the frame is decided and recorded on it (`handled`), so replay re-derives it.
 */
import Database from 'better-sqlite3';
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

class GrantingBoard implements BoardClaims {
  readonly calls: string[] = [];
  async claim(runId: string) {
    this.calls.push(runId);
    return { status: 200, body: { run: { run_id: runId, lane: 'A', prompt: 'hi', agent_id: null, timeout_s: null }, run_token: 't', skills: [] } };
  }
}

function frame(clock: FakeClock, runId: string, id: string): NewEventOf<'frame.received'> {
  return { stream: 'c1/lane:A', type: 'frame.received', data: { frameId: id, kind: 'run.requested', runId, lane: 'A' }, at: clock.now() };
}

async function startQueue(store: EventStore, clock: FakeClock, board: BoardClaims, acks: string[]) {
  const system = startActorSystem({ onError: () => {} });
  const queue = new ComputerQueue(system, store, clock, 'c1', board, {
    acknowledge: (frameId, status, reason) => acks.push(`${frameId} ${status} ${reason}`),
  });
  await queue.start();
  const stop = () => {
    queue.stop();
    stopSystem(system);
  };
  return { queue, stop };
}

/** Two lives of a queue: r1 run to its end in the first; r1's frame resent, and r2's sent, in the second. */
async function twoLives() {
  const path = tempDbPath();
  const clock = new FakeClock();
  const board = new GrantingBoard();
  const acks: string[] = [];
  const first = await openTempStore(path);
  const life1 = await startQueue(first, clock, board, acks);
  await life1.queue.input({ stream: 'c1/computer:c1', type: 'computer.configured', data: { slots: 1, loginCapacity: {} }, at: clock.now() });
  await life1.queue.input(frame(clock, 'r1', 'f1'));
  await vi.waitFor(async () => expect((await life1.queue.state()).runs.r1?.status).toBe('running'), { timeout: 5_000 });
  await life1.queue.input({ stream: 'c1/computer:c1', type: 'run.execution.ended', data: { runId: 'r1', ok: true }, at: clock.now() });
  expect((await life1.queue.state()).runs).toEqual({});
  life1.stop();
  await first.close();

  const store = await openTempStore(path);
  const life2 = await startQueue(store, clock, board, acks);
  await life2.queue.input(frame(clock, 'r1', 'f2'));
  await life2.queue.input(frame(clock, 'r2', 'f3'));
  await vi.waitFor(() => expect(board.calls).toEqual(['r1', 'r2']), { timeout: 5_000 });
  life2.stop();
  return { path, store, acks };
}

describe('a frame resent for a run handled in an earlier life', () => {
  it('is acknowledged as handled and not queued or claimed again, its lookup recorded on it, and the log replays', async () => {
    const { store, acks } = await twoLives();
    expect(acks).toEqual(['f1 202 queued', 'f2 202 already handled here (ended)', 'f3 202 queued']);
    const recorded = (await store.readStream('c1/lane:A')).filter((e) => e.type === 'frame.received').map((e) => e.data.handled);
    expect(recorded).toEqual([null, 'ended', null]);
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
    await store.close();
  });

  it('recorded by an older version, without `handled` (its queue kept a ledger), replays: replay gives it what the shell would have read', async () => {
    const { path, store } = await twoLives();
    await store.close();
    // The same log as an older version wrote it: frames carry no `handled`.
    const db = new Database(path);
    db.exec('DROP TRIGGER events_no_update');
    db.prepare("UPDATE events SET data = json_remove(data, '$.handled') WHERE type = 'frame.received'").run();
    db.close();
    const older = await openTempStore(path);
    expect((await older.readStream('c1/lane:A')).filter((e) => e.type === 'frame.received').map((e) => e.data.handled)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(await replayLog(older, deciders)).toMatchObject({ ok: true });
    await older.close();
  });
});
