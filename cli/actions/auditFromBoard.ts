import { messageOf } from '../../events/thrown.ts';
import { formatTimeline, type Timeline } from '../../runtime/audit/runTimeline.ts';
import type { AuditOptions } from '../commands/audit.ts';
import { boardCall, refusal } from '../shared/boardCall.ts';
import { logName } from '../shared/openLog.ts';
import { howChosen, print } from '../shared/options.ts';
import { runIdOnBoard } from '../shared/runIdArgument.ts';

/**
 * `runledger audit RUN` on a machine with no log (a laptop): the board's timeline of the run
 * (`GET /v1/runs/{run_id}/audit`), its computer's reported events included, printed as from a log.
 */
export async function auditFromBoard(id: string, options: AuditOptions): Promise<void> {
  const noLog = `there is no log at ${logName(options.db)} (${howChosen(options)})`;
  let runId: string;
  try {
    runId = await runIdOnBoard(options, id); // a unique prefix (docs/rules.md#tools) becomes the whole id
  } catch (error) {
    throw new Error(`${noLog}, so the board at ${options.server} was asked: ${messageOf(error)}`);
  }
  const answer = await boardCall(options, 'GET', `/v1/runs/${encodeURIComponent(runId)}/audit`);
  if (answer.status !== 200)
    throw new Error(
      `${noLog}, so the board at ${options.server} was asked: ${refusal(answer)} (on the board's machine, \`runledger audit\` reads its log)`,
    );
  const timeline = answer.body as unknown as Timeline;
  print(options, timeline, () => formatTimeline(timeline));
}
