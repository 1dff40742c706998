import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { type ClientOptions, DEFAULT_SERVER, boardCall, refusal } from '../boardCall.ts';
import { type StatusView, formatStatus } from '../../projections/statusView.ts';
import { DEFAULT_DB, print } from '../options.ts';
import { int } from '../parse.ts';
import { runIdOnBoard } from '../runIdArgument.ts';
import { waitForEnd } from '../waitForEnd.ts';

const withBoard = (command: Command) =>
  command
    .option('--server <url>', 'the board', DEFAULT_SERVER)
    .option('--token <token>', 'the submit token (default: the file beside --db)')
    .option('--db <file>', 'the log whose folder holds the submit token', DEFAULT_DB)
    .option('--json', 'print results as JSON, for scripts');

export function submitCommand(): Command {
  return withBoard(new Command('submit'))
    .description('submit a run (the prompt from --prompt or stdin); prints its id')
    .requiredOption('--lane <lane>', 'the conversation it is a turn of')
    .option('--prompt <text>', 'the prompt (default: stdin)')
    .option('--agent <id>', 'the agent login to run it on')
    .option('--timeout-s <s>', 'its budget in seconds (0 = none)', int('--timeout-s', 0))
    .option('--idempotency-key <key>', 'a retry with the same key submits nothing new')
    .action(async (o: ClientOptions & { lane: string; prompt?: string; agent?: string; timeoutS?: number; idempotencyKey?: string }) => {
      const prompt = o.prompt ?? readFileSync(0, 'utf8');
      const body = { lane: o.lane, prompt, ...(o.agent ? { agent_id: o.agent } : {}), ...(o.timeoutS !== undefined ? { timeout_s: o.timeoutS } : {}) };
      const answer = await boardCall(o, 'POST', '/v1/runs', body, o.idempotencyKey ? { 'idempotency-key': o.idempotencyKey } : {});
      if (answer.status !== 201) throw new Error(refusal(answer.status, answer.body));
      print(o, answer.body, () => String(answer.body?.run_id));
    });
}

export function cancelCommand(): Command {
  return withBoard(new Command('cancel'))
    .description('cancel a run: says what the board did ("stopping on c1", "withdrawn before it was claimed")')
    .argument('<run-id>', 'the run: its id, or a unique prefix of it (6 characters or more)')
    .option('--wait', 'then wait for the run to end and print its final state (exit 0 only when it ended cancelled)')
    .option('--wait-s <s>', 'how long --wait waits, in seconds', int('--wait-s', 1), 60)
    .action(async (runId: string, o: ClientOptions & { wait?: boolean; waitS: number }) => {
      runId = await runIdOnBoard(o, runId); // a unique prefix (SPEC 6) becomes the whole id
      const answer = await boardCall(o, 'POST', `/v1/runs/${encodeURIComponent(runId)}/cancel`, {});
      if (answer.status !== 202) throw new Error(refusal(answer.status, answer.body));
      // An older board answers only `{run_id}`: it accepted, and says no more.
      const detail = typeof answer.body?.detail === 'string' ? answer.body.detail : 'accepted';
      print(o, { run_id: runId, ...answer.body, detail }, () => `cancel of ${runId}: ${detail}`);
      if (!o.wait) return;
      const { view, ended } = await waitForEnd(o, runId, o.waitS);
      print(o, view, () => (ended ? `run ${runId} ended ${String(view.state)}` : `run ${runId} is still ${String(view.state)} after ${o.waitS} s`));
      process.exitCode = view.state === 'cancelled' ? 0 : 1;
    });
}

export function showCommand(): Command {
  return withBoard(new Command('show'))
    .description('one run as the board has it')
    .argument('<run-id>', 'the run: its id, or a unique prefix of it (6 characters or more)')
    .action(async (runId: string, o: ClientOptions) => {
      runId = await runIdOnBoard(o, runId); // a unique prefix (SPEC 6) becomes the whole id
      const answer = await boardCall(o, 'GET', `/v1/runs/${encodeURIComponent(runId)}`);
      if (answer.status !== 200) throw new Error(refusal(answer.status, answer.body));
      print(o, answer.body, () => JSON.stringify(answer.body, null, 2));
    });
}

export function statusCommand(): Command {
  return withBoard(new Command('status'))
    .description('live: queue per lane, running, parked with their notBefore, claims')
    .action(async (o: ClientOptions) => {
      const answer = await boardCall(o, 'GET', '/v1/status');
      if (answer.status !== 200) throw new Error(refusal(answer.status, answer.body));
      print(o, answer.body, () => formatStatus(answer.body as unknown as StatusView));
    });
}
