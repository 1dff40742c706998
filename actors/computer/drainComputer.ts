import type { Clock } from '../runtime/clock.ts';
import type { Computer } from './computer.ts';

/**
 * Shutdown (SPEC section 4, "Completion"): nothing new is claimed or started, executing runs get
 * `drainMs` to finish, then their process groups are killed; resolves once every run is settled.
 * The push stream stays open meanwhile, so a frame that arrives is answered 503 `draining` (the
 * board offers the run again later) rather than left without an answer.
 */
export async function drainComputer(
  computer: Computer,
  clock: Clock,
  drainMs: number,
  log: (line: string) => void,
  reason = 'shutdown signal',
): Promise<void> {
  const id = computer.queue.computer;
  log('draining: nothing new starts; running turns get their drain time');
  computer.runs.beginDrain();
  await computer.queue.input({ stream: `${id}/computer:${id}`, type: 'drain.started', data: { reason }, at: clock.now() });
  const deadline = clock.now() + drainMs;
  let killed = false;
  // A claim in flight is waited for too: if the board grants it, the run is the daemon's to complete.
  while (computer.runs.liveRuns().length > 0 || (await computer.queue.claimsInFlight()) > 0) {
    if (!killed && clock.now() >= deadline) {
      log(`drain time over: stopping ${computer.runs.liveRuns().length} run(s)`);
      computer.runs.killAll();
      killed = true;
    }
    if (clock.now() >= deadline + 15 * 60_000) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  computer.push.stop();
}
