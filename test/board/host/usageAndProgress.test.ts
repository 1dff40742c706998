import { describe, expect, it } from 'vitest';
import { usageMetrics } from '../../../adapters/http/httpApi.ts';
import { emptyTally } from '../../../projections/usage.ts';
import { liveBoard, ofType } from './liveBoard.ts';

/** docs/rules.md#wire-and-cli: `usage` on complete and on GET /v1/runs/{id}; the heartbeat's `progress?`, in memory only. */
describe('the board API: usage and progress', () => {
  const claimed = async (board: Awaited<ReturnType<typeof liveBoard>>) => {
    const runId = await board.submit('A');
    const claim = await board.call('POST', `/v1/computers/c1/runs/${runId}/claim`, { token: board.tokens.c1, body: {} });
    return { runId, token: claim.body.run_token as string };
  };

  it('usage with a number no turn can have is refused 422 naming the field, and nothing is recorded', async () => {
    const board = await liveBoard(['c1']);
    const { runId, token } = await claimed(board);
    const bad = [
      [{ cost_usd: 1e9 }, 'usage.cost_usd'],
      [{ input_tokens: -1 }, 'usage.input_tokens'],
      [{ output_tokens: 1.5 }, 'usage.output_tokens'],
      [{ cached_input_tokens: 1e11 }, 'usage.cached_input_tokens'],
      [{ tokens: 3 }, 'usage'],
      [{ cost_usd: '0.1' }, 'usage.cost_usd'],
    ] as const;
    for (const [usage, field] of bad) {
      const answer = await board.call('POST', `/v1/runs/${runId}/complete`, { token, body: { ok: true, usage } });
      expect(answer, JSON.stringify(usage)).toMatchObject({ status: 422, body: { detail: { error: 'invalid_body' } } });
      expect(answer.body.detail.message.startsWith(`${field}: `), answer.body.detail.message).toBe(true);
    }
    expect(ofType(await board.log(), 'board.completion.received')).toHaveLength(0);
    expect((await board.call('GET', `/v1/runs/${runId}`)).body.state).toBe('claimed');
  });

  it('usage sent on complete is kept with the run and answered on GET /v1/runs/{id}', async () => {
    const board = await liveBoard(['c1']);
    const { runId, token } = await claimed(board);
    const usage = { cost_usd: 0.0123, input_tokens: 12, output_tokens: 7, cached_input_tokens: 3000 };
    expect((await board.call('POST', `/v1/runs/${runId}/complete`, { token, body: { ok: true, usage } })).status).toBe(200);
    expect((await board.call('GET', `/v1/runs/${runId}`)).body).toMatchObject({ state: 'succeeded', usage });
    const [finished] = ofType(await board.log(), 'board.run.finished');
    expect(finished?.data).toMatchObject({ usage: { costUsd: 0.0123, inputTokens: 12, outputTokens: 7, cachedInputTokens: 3000 } });
  });

  it('a completion without usage (an older computer) is taken as before: no usage anywhere', async () => {
    const board = await liveBoard(['c1']);
    const { runId, token } = await claimed(board);
    expect((await board.call('POST', `/v1/runs/${runId}/complete`, { token, body: { ok: false, error: 'boom' } })).status).toBe(200);
    const view = (await board.call('GET', `/v1/runs/${runId}`)).body;
    expect(view).toMatchObject({ state: 'failed', error: 'boom' });
    expect(view).not.toHaveProperty('usage');
    const log = await board.log();
    expect(ofType(log, 'board.completion.received')[0]?.data).not.toHaveProperty('usage');
    expect(ofType(log, 'board.run.finished')[0]?.data).not.toHaveProperty('usage');
  });

  it("a heartbeat's progress is answered on GET while the run is open, never recorded, and gone once it ends", async () => {
    const board = await liveBoard(['c1']);
    const { runId, token } = await claimed(board);
    const beat = (progress?: string) =>
      board.call('POST', `/v1/runs/${runId}/heartbeat`, { token, body: progress === undefined ? {} : { progress } });
    expect((await beat('Bash: npm test')).status).toBe(200);
    const recorded = (await board.log()).length;
    expect((await board.call('GET', `/v1/runs/${runId}`)).body).toMatchObject({ state: 'running', progress: 'Bash: npm test' });
    for (const progress of ['Read: a.ts', 'Edit: a.ts', undefined, 'says: done']) expect((await beat(progress)).status).toBe(200);
    // A beat without progress keeps the last line; the log grew by nothing.
    expect((await board.call('GET', `/v1/runs/${runId}`)).body.progress).toBe('says: done');
    expect((await board.log()).length).toBe(recorded);
    expect((await board.call('POST', `/v1/runs/${runId}/heartbeat`, { token, body: { progress: 'x'.repeat(4097) } })).status).toBe(422);
    // A computer of another version may send it unmasked: the board masks and bounds it too.
    expect((await beat('Bash: API_TOKEN=abcdefgh123 deploy\n--prod')).status).toBe(200);
    expect((await board.call('GET', `/v1/runs/${runId}`)).body.progress).toBe('Bash: API_TOKEN=*** deploy --prod');
    expect((await board.call('POST', `/v1/runs/${runId}/complete`, { token, body: { ok: true } })).status).toBe(200);
    expect((await board.call('GET', `/v1/runs/${runId}`)).body).not.toHaveProperty('progress');
    expect(board.server.board.progress.size).toBe(0);
    expect(JSON.stringify(await board.log())).not.toContain('npm test');
  });
});

describe('/metrics: usage per login', () => {
  it('exports each field as a Prometheus counter per login, sorted', () => {
    const text = usageMetrics({
      team: { ...emptyTally(), runs: 2, costUsd: 0.5, inputTokens: 100 },
      default: { ...emptyTally(), runs: 1, outputTokens: 7 },
    });
    expect(text).toContain(
      '# TYPE runledger_usage_cost_usd_total counter\nrunledger_usage_cost_usd_total{login="default"} 0\nrunledger_usage_cost_usd_total{login="team"} 0.5\n',
    );
    expect(text).toContain('runledger_usage_runs_total{login="team"} 2');
    expect(text).toContain('runledger_usage_output_tokens_total{login="default"} 7');
    expect(text.endsWith('\n')).toBe(true);
  });
});
