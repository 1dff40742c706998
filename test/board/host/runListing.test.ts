/**
 * `GET /v1/runs`'s list over a log and a board state made by hand: a run is listed once even when it
 * finished between the read of the live runs and the read of the log; a page of whole texts stays
 * bounded; a row says only what is known (no usage: no `usage`, not zero) and takes its duration from
 * its agent process's own start and exit when the log holds them.
 */
import { describe, expect, it } from 'vitest';
import { type BoardRun, initialBoardState } from '../../../actors/board/boardState.ts';
import { listRuns, type RunListQuery } from '../../../adapters/http/runListing.ts';
import type { DomainEvent } from '../../../events/catalog.ts';

const ANY: RunListQuery = { lane: null, state: null, computer: null, text: null, limit: 25, before: null, texts: 'excerpt' };

type Row = Omit<DomainEvent, 'version' | 'cause' | 'actor'>;

function logOf(rows: Row[]) {
  const all = rows.map((e) => ({ ...e, version: 1, cause: null, actor: 'test' }) as DomainEvent);
  return {
    headSeq: async () => all.at(-1)?.seq ?? 0,
    readAll: async (after: number, limit: number) => all.filter((e) => e.seq > after).slice(0, limit),
    readEntity: async (entity: string) => all.filter((e) => e.stream === entity || e.stream.endsWith(`/${entity}`)),
  };
}

const queued = (seq: number, runId: string, prompt = 'hi'): Row =>
  ({
    seq,
    at: seq * 1000,
    stream: `run:${runId}`,
    type: 'board.run.queued',
    data: { runId, lane: 'talk', prompt, agentId: null, timeoutS: null, submittedOrder: seq },
  }) as Row;
const finished = (seq: number, runId: string): Row =>
  ({
    seq,
    at: seq * 1000,
    stream: `run:${runId}`,
    type: 'board.run.finished',
    data: { runId, computerId: 'c1', state: 'succeeded', reason: 'done' },
  }) as Row;

/** A board state that still holds `runIds` as running (as it was read a moment before they finished). */
function boardHolding(...runIds: string[]) {
  const state = initialBoardState();
  runIds.forEach((runId, i) => {
    state.runs[runId] = {
      runId,
      lane: 'talk',
      prompt: 'hi',
      agentId: null,
      timeoutS: null,
      submittedOrder: i,
      submittedAt: 0,
      state: 'running',
      computerId: 'c1',
      incarnation: null,
      claimedAt: 0,
      cancelRequested: false,
      offeredTo: [],
      reply: null,
    } satisfies BoardRun;
  });
  return <T>(read: (s: typeof state) => T) => Promise.resolve(read(state));
}

describe('the list of runs', () => {
  it('given a run the state held as running that finished before the log was read, then it is listed once, finished', async () => {
    const store = logOf([queued(1, 'r1'), queued(2, 'r2'), finished(3, 'r1')]);

    const page = await listRuns({ board: boardHolding('r1', 'r2'), store, progress: () => null }, ANY);

    expect(page.runs.map((r) => [r.run_id, r.state])).toEqual([
      ['r2', 'queued'],
      ['r1', 'succeeded'],
    ]);
  });

  it('given runs whose texts are long, then a page of whole texts ends once they pass 8 MiB, and the next page goes on', async () => {
    const long = 'x'.repeat(5 * 1024 * 1024);
    const store = logOf([
      queued(1, 'r1', long),
      finished(2, 'r1'),
      queued(3, 'r2', long),
      finished(4, 'r2'),
      queued(5, 'r3', long),
      finished(6, 'r3'),
    ]);
    const sources = { board: boardHolding(), store, progress: () => null };

    const whole = await listRuns(sources, { ...ANY, texts: 'whole' });
    const rest = await listRuns(sources, { ...ANY, texts: 'whole', before: { finished: Number(whole.next) } });
    const excerpts = await listRuns(sources, ANY);

    expect(whole.runs.map((r) => r.run_id)).toEqual(['r3', 'r2']);
    expect(whole.runs[0]!.prompt).toHaveLength(long.length);
    expect(rest.runs.map((r) => r.run_id)).toEqual(['r1']);
    expect(excerpts.runs).toHaveLength(3);
    expect(excerpts.runs[0]!.prompt).toBe(`${'x'.repeat(300)}…`);
  });

  it("given a run whose agent's process began and exited on its computer, then its duration is that process's, and a usage nobody reported is absent", async () => {
    const store = logOf([
      queued(1, 'r1'),
      { seq: 2, at: 10_000, stream: 'run:r1', type: 'board.run.claimed', data: { runId: 'r1', computerId: 'c1' } } as Row,
      { seq: 3, at: 10_500, stream: 'c1/run:r1', type: 'run.process.began', data: { runId: 'r1', pid: 42, resuming: null } } as Row,
      {
        seq: 4,
        at: 11_000,
        stream: 'run:r1',
        type: 'board.run.running',
        data: { runId: 'r1', computerId: 'c1', reason: 'its first heartbeat came' },
      } as Row,
      {
        seq: 5,
        at: 13_750,
        stream: 'c1/run:r1',
        type: 'run.process.exited',
        data: { runId: 'r1', outcome: 'exited', exitCode: 0, signal: null, reply: 'done', tail: '', stderrTail: '' },
      } as Row,
      {
        seq: 6,
        at: 14_000,
        stream: 'run:r1',
        type: 'board.run.finished',
        data: { runId: 'r1', computerId: 'c1', state: 'succeeded', reason: 'done' },
      } as Row,
    ]);

    const [row] = (await listRuns({ board: boardHolding(), store, progress: () => null }, ANY)).runs;

    expect(row).toEqual({
      run_id: 'r1',
      lane: 'talk',
      state: 'succeeded',
      computer_id: 'c1',
      submitted_at: new Date(1000).toISOString(),
      claimed_at: new Date(10_000).toISOString(),
      started_at: new Date(10_500).toISOString(),
      finished_at: new Date(14_000).toISOString(),
      duration_ms: 3250,
      prompt: 'hi',
      reply: 'done',
    });
  });
});
