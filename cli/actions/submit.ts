import type { SubmitOptions } from '../commands/client.ts';
import { boardCall, refusal } from '../shared/boardCall.ts';
import { print } from '../shared/options.ts';
import { readPrompt } from '../shared/prompt.ts';

/**
 * `runledger submit`: one run to the board (the prompt from --prompt or stdin); prints its id. A file
 * of its own, apart from `show` and `cancel`: what they read a run with (its schema, the event
 * schemas its words come from) cost a submit a tenth of its CPU to load, for nothing.
 */
export async function submit(o: SubmitOptions): Promise<void> {
  const prompt = readPrompt('submit', o.prompt);
  const body = {
    lane: o.lane,
    prompt,
    ...(o.agent ? { agent_id: o.agent } : {}),
    ...(o.timeoutS !== undefined ? { timeout_s: o.timeoutS } : {}),
    ...(o.repo !== undefined ? { repo: o.repo } : {}),
    ...(o.base !== undefined ? { base: o.base } : {}),
  };
  const answer = await boardCall(o, 'POST', '/v1/runs', body, o.idempotencyKey ? { 'idempotency-key': o.idempotencyKey } : {});
  if (answer.status !== 201) throw new Error(refusal(answer));
  print(o, answer.body, () => String(answer.body?.run_id));
}
