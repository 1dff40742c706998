import * as z from 'zod';
import { noRunStartsWith, resolveRunId } from '../../projections/audit/runIdPrefix.ts';
import type { LogQueries } from '../../runtime/store/logQueries.ts';
import { boardCall, type ClientOptions, refusal } from './boardCall.ts';

/** `GET /v1/runs?prefix=P`: the board's run ids that start with P, sorted, a few of them. */
const PrefixAnswer = z.object({ run_ids: z.array(z.string()) });

/**
 * The whole id of the run a board command names by its id or a unique prefix (docs/rules.md#tools), asked of the
 * board; no run has or starts with it: an error saying so.
 */
export async function runIdOnBoard(options: ClientOptions, input: string): Promise<string> {
  const runId = await resolveRunId(input, async (prefix) => {
    const answer = await boardCall(options, 'GET', `/v1/runs?prefix=${encodeURIComponent(prefix)}`);
    if (answer.status !== 200) throw new Error(refusal(answer));
    const parsed = PrefixAnswer.safeParse(answer.body);
    if (!parsed.success)
      throw new Error(`the board at ${options.server} answered the run ids starting with ${prefix} with something else: ${parsed.error.message}`);
    return parsed.data.run_ids;
  });
  if (runId === null) throw new Error(noRunStartsWith(input));
  return runId;
}

/** The same from the log (`audit`, `replay --run`): null when no run has or starts with `input`. */
export function runIdInLog(store: Pick<LogQueries, 'entityIdsStartingWith'>, input: string): Promise<string | null> {
  return resolveRunId(input, (prefix, limit) => store.entityIdsStartingWith('run', prefix, limit));
}
