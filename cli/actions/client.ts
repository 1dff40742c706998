import type { RunRow } from '../../adapters/http/runListing.ts';
import type { CancelOptions, ShowOptions } from '../commands/client.ts';
import { boardCall, refusal } from '../shared/boardCall.ts';
import { runDetails } from '../shared/boardRuns.ts';
import { print } from '../shared/options.ts';
import { runIdOnBoard } from '../shared/runIdArgument.ts';
import { runText } from '../shared/runWords.ts';
import { waitForEnd } from '../shared/waitForEnd.ts';

/** `runledger cancel RUN`: says what the board did; with --wait, waits for the run's end. */
export async function cancel(runId: string, o: CancelOptions): Promise<void> {
  runId = await runIdOnBoard(o, runId); // a unique prefix (docs/rules.md#tools) becomes the whole id
  const answer = await boardCall(o, 'POST', `/v1/runs/${encodeURIComponent(runId)}/cancel`, {});
  if (answer.status !== 202) throw new Error(refusal(answer));
  // An older board answers only `{run_id}`: it accepted, and says no more.
  const detail = typeof answer.body?.detail === 'string' ? answer.body.detail : 'accepted';
  print(o, { run_id: runId, ...answer.body, detail }, () => `cancel of ${runId}: ${detail}`);
  if (!o.wait) return;
  const { view, ended } = await waitForEnd(o, runId, o.waitS);
  print(o, view, () => (ended ? `run ${runId} ended ${String(view.state)}` : `run ${runId} is still ${String(view.state)} after ${o.waitS} s`));
  process.exitCode = view.state === 'cancelled' ? 0 : 1;
}

/** `runledger show RUN`: one run as the board has it. */
export async function show(runId: string, o: ShowOptions): Promise<void> {
  runId = await runIdOnBoard(o, runId); // a unique prefix (docs/rules.md#tools) becomes the whole id
  if (o.follow) return (await import('./followRun.ts')).followRun(runId, o);
  const details = o.json || o.diff ? null : await runDetails(o, runId);
  if (details !== null) return print(o, details, () => runText(details));
  // --json: the board's own view (`GET /v1/runs/{run_id}`), as scripts have read it all along; for a
  // person, what a board older than the details route says of it (no prompt, no times).
  const answer = await boardCall(o, 'GET', `/v1/runs/${encodeURIComponent(runId)}`);
  if (answer.status !== 200) throw new Error(refusal(answer));
  if (o.diff) {
    const computer = typeof answer.body?.computer_id === 'string' ? answer.body.computer_id : null;
    return (await import('./showDiff.ts')).showDiff(runId, o, computer);
  }
  print(
    o,
    answer.body,
    () =>
      `${runText({ ...(answer.body as unknown as RunRow), prompt: undefined })}\n(the board at ${o.server} is older than this runledger: it gives no prompt or times)`,
  );
}
