import { onTestFinished } from 'vitest';
import { Computer } from '../../apps/computer/computer.ts';
import { frameInput } from '../../events/wire/frames.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { killEveryGroup } from './computerRuns.ts';
import type { StandInBoard } from './standInBoard.ts';
import { tempDir } from './tempStore.ts';

/**
 * The whole computer `c1` (queue, runs, effects) on a real log, with a stand-in board; frames are
 * given to it exactly as its push stream gives them. `crash` stops it as a killed daemon stops: no
 * drain, nothing more written (its agents' groups are killed when the test ends).
 */
export async function startComputer(store: EventStore, clock: Clock, board: StandInBoard, exec: string, workspaceRoot = tempDir()) {
  const system = startActorSystem({ onError: () => {} });
  const computer = new Computer({
    system,
    store,
    clock,
    board,
    exec,
    computer: 'c1',
    server: 'http://127.0.0.1:9',
    token: 'unused',
    workspaceRoot,
    heartbeatMs: 1_000,
  });
  let stopped = false;
  const crash = () => {
    if (stopped) return;
    stopped = true;
    computer.stop();
    stopSystem(system);
  };
  onTestFinished(async () => {
    crash();
    computer.runs.killAll();
    await killEveryGroup(store);
  });
  await computer.start();
  // No board listens: the stand-in answers the calls, and frames come in through `frame` below.
  await computer.push.stop();
  let frames = 0;
  const frame = (kind: string, runId: string, lane?: string) =>
    computer.queue.input(
      frameInput('c1', JSON.stringify({ id: `f${++frames}-${runId}`, kind, data: { run_id: runId, ...(lane ? { lane } : {}) } }), clock.now()),
    );
  return { computer, frame, crash };
}
