/**
 * The history's read of the log, over a store made by hand: newest first, a page at a time, its
 * cursor, and a scan that stops at its budget with a cursor to search on from, rather than read the
 * whole log for a filter nothing matches.
 */
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../events/catalog.ts';
import { type HistoryQuery, historyPage, historyQueryOf, RUN_BUDGET, SCAN_BUDGET } from '../../runtime/audit/runHistory.ts';

const ANY: HistoryQuery = { state: null, lane: null, computer: null, text: null, before: null, limit: 25 };

function logOf(events: Omit<DomainEvent, 'version' | 'cause' | 'actor' | 'at'>[], head = events.at(-1)?.seq ?? 0) {
  const all = events.map((e) => ({ ...e, version: 1, cause: null, actor: 'test', at: e.seq * 1000 }) as DomainEvent);
  return {
    headSeq: async () => head,
    readAll: async (after: number, limit: number) => all.filter((e) => e.seq > after).slice(0, limit),
    readEntity: async (entity: string) => all.filter((e) => e.stream === entity),
  };
}

const run = (seq: number, runId: string, lane: string, prompt: string, state: 'succeeded' | 'failed') => [
  { seq, stream: `run:${runId}`, type: 'board.run.queued', data: { runId, lane, prompt, agentId: null, timeoutS: null, submittedOrder: seq } },
  { seq: seq + 1, stream: `run:${runId}`, type: 'board.run.finished', data: { runId, computerId: 'c1', state, reason: 'done' } },
];

describe('the history of finished runs, read from the log', () => {
  const store = logOf([
    ...run(1, 'r1', 'a', 'one', 'succeeded'),
    ...run(3, 'r2', 'b', 'two NEEDLE', 'failed'),
    ...run(5, 'r3', 'a', 'three', 'succeeded'),
  ] as never);

  it('history_pages_newest_first_with_a_cursor_only_when_older_runs_exist', async () => {
    const first = await historyPage(store, { ...ANY, limit: 2 });
    expect(first.runs.map((r) => r.runId)).toEqual(['r3', 'r2']);
    expect(first.next).toBe(4);
    const second = await historyPage(store, { ...ANY, limit: 2, before: first.next });
    expect(second).toMatchObject({ next: null, partial: false });
    expect(second.runs.map((r) => r.runId)).toEqual(['r1']);
    expect(second.runs[0]).toMatchObject({ lane: 'a', state: 'succeeded', computer: 'c1', prompt: 'one', submittedAt: 1000, finishedAt: 2000 });
  });

  it('history_filters_by_lane_state_computer_and_text', async () => {
    const ids = async (q: Partial<HistoryQuery>) => (await historyPage(store, { ...ANY, ...q })).runs.map((r) => r.runId);
    expect(await ids({ lane: 'a' })).toEqual(['r3', 'r1']);
    expect(await ids({ state: 'failed' })).toEqual(['r2']);
    expect(await ids({ computer: 'c2' })).toEqual([]);
    expect(await ids({ text: 'needle' })).toEqual(['r2']);
  });

  it('history_lists_a_run_cancelled_before_any_claim_as_held_by_no_computer', async () => {
    const cancelled = logOf([
      ...run(1, 'r1', 'a', 'one', 'succeeded'),
      {
        seq: 3,
        stream: 'run:r9',
        type: 'board.run.queued',
        data: { runId: 'r9', lane: 'a', prompt: 'never run', agentId: null, timeoutS: null, submittedOrder: 3 },
      },
      { seq: 4, stream: 'run:r9', type: 'board.run.cancelled', data: { runId: 'r9', offeredTo: [], reason: 'withdrawn before it was claimed' } },
    ] as never);
    const page = await historyPage(cancelled, ANY);
    expect(page.runs[0]).toMatchObject({
      runId: 'r9',
      state: 'cancelled',
      computer: null,
      error: 'withdrawn before it was claimed',
      finishedAt: 4000,
    });
    expect((await historyPage(cancelled, { ...ANY, state: 'cancelled' })).runs.map((r) => r.runId)).toEqual(['r9']);
    expect((await historyPage(cancelled, { ...ANY, computer: 'c1' })).runs.map((r) => r.runId)).toEqual(['r1']);
  });

  it('history_stops_at_its_scan_budget_with_a_cursor_to_search_on_from', async () => {
    const sparse = logOf([...run(1, 'r1', 'a', 'one', 'succeeded')] as never, 3 * SCAN_BUDGET);
    const page = await historyPage(sparse, ANY);
    expect(page).toEqual({ runs: [], next: 2 * SCAN_BUDGET + 1, partial: true });
  });

  it('history_reads_a_bounded_number_of_runs_a_page_when_a_filter_matches_none', async () => {
    const many = logOf(Array.from({ length: RUN_BUDGET + 10 }, (_, i) => run(2 * i + 1, `r${i}`, 'a', 'p', 'succeeded')).flat() as never);
    let entitiesRead = 0;
    const counting = {
      ...many,
      readEntity: (entity: string) => {
        entitiesRead++;
        return many.readEntity(entity);
      },
    };
    const first = await historyPage(counting, { ...ANY, lane: 'elsewhere' });
    expect(entitiesRead).toBe(RUN_BUDGET);
    expect(first).toMatchObject({ runs: [], partial: true });
    // Searching on from the cursor reads the rest, and the run the budget stopped at is not skipped.
    entitiesRead = 0;
    const second = await historyPage(counting, { ...ANY, lane: 'elsewhere', before: first.next });
    expect(entitiesRead).toBe(10);
    expect(second).toMatchObject({ runs: [], next: null, partial: false });
  });

  it('history_refuses_a_bad_parameter_naming_it', () => {
    const of = (query: string) => historyQueryOf(new URLSearchParams(query), (id) => /^[A-Za-z0-9-]{1,64}$/.test(id), 'the id rule');
    expect(of('state=done')).toEqual({ error: expect.stringContaining('state must be one of succeeded, failed, cancelled, resolved') });
    expect(of('lane=a/b')).toEqual({ error: 'lane must be a lane id, matching the id rule' });
    expect(of('limit=1000')).toEqual({ error: 'limit must be a whole number from 1 to 100' });
    expect(of('before=-1')).toEqual({ error: expect.stringContaining('before must be a positive whole number') });
    expect(of('lane=a&q=x')).toMatchObject({ lane: 'a', text: 'x', limit: 25 });
  });
});
