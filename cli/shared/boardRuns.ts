import * as z from 'zod';
import type { RunRow } from '../../adapters/http/runListing.ts';
import { boardCall, type ClientOptions, refusal } from './boardCall.ts';

/** The most runs the board gives in one page of `GET /v1/runs`. */
const PAGE_MAX = 100;

/** A row as `GET /v1/runs` and `GET /v1/runs/{run_id}/details` give it: the fields read here checked, the others kept as sent. */
const Row = z.looseObject({
  run_id: z.string(),
  lane: z.string().nullable(),
  state: z.string(),
  prompt: z.string(),
  computer_id: z.string().optional(),
  submitted_at: z.string().optional(),
  claimed_at: z.string().optional(),
  started_at: z.string().optional(),
  finished_at: z.string().optional(),
  duration_ms: z.number().optional(),
  usage: z.looseObject({ cost_usd: z.number().optional() }).optional(),
  reply: z.string().optional(),
  error: z.string().optional(),
  progress: z.string().optional(),
});
const Page = z.object({ runs: z.array(Row), next: z.string().nullable() });

export interface RunFilters {
  readonly lane?: string | undefined;
  readonly state?: string | undefined;
  readonly computer?: string | undefined;
  /** Text the prompt, reply or error contains. */
  readonly q?: string | undefined;
}

/**
 * Up to `count` runs of the board, newest first (live ones, then finished ones), following the pages
 * of `GET /v1/runs` until there are that many or no more. `whole`: every text whole (a transcript),
 * else the start of each (a list).
 */
export async function boardRuns(options: ClientOptions, filters: RunFilters, count: number, whole = false): Promise<RunRow[]> {
  const rows: RunRow[] = [];
  let before: string | null = null;
  for (;;) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(filters)) if (value !== undefined) params.set(name, value);
    params.set('limit', String(Math.min(PAGE_MAX, count - rows.length)));
    if (whole) params.set('texts', 'whole');
    if (before !== null) params.set('before', before);
    const answer = await boardCall(options, 'GET', `/v1/runs?${params}`);
    if (answer.status !== 200) throw new Error(listRefusal(options, answer));
    const page = Page.safeParse(answer.body);
    if (!page.success) throw new Error(`the board at ${options.server} answered the list of runs with something else: ${page.error.message}`);
    // The rows as the board sent them (checked, not rebuilt): `--json` prints them so.
    rows.push(...(answer.body as { runs: RunRow[] }).runs);
    if (rows.length >= count || page.data.next === null) return rows.slice(0, count);
    before = page.data.next;
  }
}

/** The run as a person reads it (prompt, times, cost, texts whole), or null from a board too old to say more than `GET /v1/runs/{run_id}`. */
export async function runDetails(options: ClientOptions, runId: string): Promise<RunRow | null> {
  const answer = await boardCall(options, 'GET', `/v1/runs/${encodeURIComponent(runId)}/details`);
  if (answer.status === 404 && errorOf(answer.body) === 'not_found') return null;
  if (answer.status !== 200) throw new Error(refusal(answer));
  const row = Row.safeParse(answer.body);
  if (!row.success) throw new Error(`the board at ${options.server} answered run ${runId} with something else: ${row.error.message}`);
  return answer.body as unknown as RunRow;
}

/** A board older than the list answers a query without `prefix` 400 `invalid_prefix`: said so, with what to do. */
function listRefusal(options: ClientOptions, answer: Parameters<typeof refusal>[0]): string {
  if (answer.status === 400 && errorOf(answer.body) === 'invalid_prefix')
    return `the board at ${options.server} is older than this runledger and lists no runs (GET /v1/runs): upgrade the board`;
  return refusal(answer);
}

function errorOf(body: Record<string, unknown> | undefined): unknown {
  return (body?.detail as { error?: unknown } | undefined)?.error;
}
