import { isTerminal, type RunState } from '../../actors/board/boardState.ts';
import { boardCall, type ClientOptions, refusal } from './boardCall.ts';

/** How often `--wait` asks the board: often enough to print the end within a fraction of a second. */
const POLL_MS = 200;

/**
 * Polls `GET /v1/runs/{id}` until the run is terminal or `waitS` seconds have passed: the run as the
 * board last had it, and whether it ended.
 */
export async function waitForEnd(options: ClientOptions, runId: string, waitS: number): Promise<{ view: Record<string, unknown>; ended: boolean }> {
  const deadline = performance.now() + waitS * 1000;
  for (;;) {
    const answer = await boardCall(options, 'GET', `/v1/runs/${encodeURIComponent(runId)}`);
    if (answer.status !== 200) throw new Error(refusal(answer));
    const view = answer.body ?? {};
    if (isTerminal(view.state as RunState)) return { view, ended: true };
    if (performance.now() >= deadline) return { view, ended: false };
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(0, deadline - performance.now()))));
  }
}
