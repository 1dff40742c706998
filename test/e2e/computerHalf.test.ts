/**
 * The board sees the whole run: one `runledger server` and two `daemon --server`, each on a log of its
 * own (real processes). Each computer sends the board a copy of its runs', lanes' and sessions' events
 * after commit; the board keeps them apart from its log and shows them: `audit RUN`, the run page (its
 * live socket's JSON), the board page's sessions and each computer's slots, also once the computer
 * that ran the turn has been stopped. The board's `replay` is untouched by them.
 */
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { tempDir } from '../support/tempStore.ts';
import { claudeLikeAgent } from '../web/webSupport.ts';
import {
  addComputer,
  type BoardProcess,
  checkLogs,
  cliOk,
  connectedComputers,
  readLog,
  startBoard,
  startCli,
  submit,
  waitFor,
  waitForTerminal,
} from './support/cluster.ts';

async function joinBoard(dir: string, board: BoardProcess, id: string) {
  const token = await addComputer(board.db, id);
  const db = `${dir}/${id}/${id}.db`;
  const process = startCli([
    'daemon',
    '--server',
    board.url,
    '--computer',
    id,
    '--token',
    token,
    '--db',
    db,
    '--heartbeat-s',
    '1',
    '--exec',
    claudeLikeAgent(),
  ]);
  await process.waitForOutput(/push stream connected/);
  return { db, process };
}

/** The first message of the board's live socket (`/v1/live`, as its pages open it). */
function hello(url: string, query = ''): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/live${query}`, { headers: { origin: url } });
    const timer = setTimeout(() => reject(new Error(`no hello from /v1/live${query}`)), 10_000);
    ws.once('message', (data) => {
      clearTimeout(timer);
      ws.close();
      resolve(JSON.parse(String(data)) as Record<string, unknown>);
    });
    ws.once('error', reject);
  });
}

interface Entry {
  readonly owner: string | null;
  readonly step: string;
  readonly at: number;
}

describe("the board shows a remote computer's half of each run", () => {
  it('in audit, on the run page, in sessions and slots, after the computer stopped; replay of the board unchanged', async () => {
    const dir = tempDir();
    const board = await startBoard(`${dir}/board/board.db`);
    const computers = { c1: await joinBoard(dir, board, 'c1'), c2: await joinBoard(dir, board, 'c2') };
    await waitFor('both computers on the push stream', async () => (await connectedComputers(board.url)) === 2);

    const failed = await submit(board, 'talk', 'sleep=200 stderr=remote-oops exit=3');
    const other = await submit(board, 'other', 'sleep=200');
    const views = await Promise.all([waitForTerminal(board.url, failed), waitForTerminal(board.url, other)]);
    expect(views.map((v) => v.state)).toEqual(['failed', 'succeeded']);
    const holder = views[0]!.computer_id as 'c1' | 'c2';

    // Stopped (drained): what it recorded of its last turn reached the board before it went.
    await computers[holder].process.stop();
    await waitFor('the computer to leave the push stream', async () => (await connectedComputers(board.url)) === 1);

    const audit = JSON.parse(await cliOk(['audit', failed, '--db', board.db, '--json'])) as { streams: string[]; entries: Entry[] };
    expect(audit.streams).toEqual(expect.arrayContaining([`run:${failed}`, `${holder}/run:${failed}`]));
    const steps = audit.entries.map((e) => `${e.owner ?? 'board'} ${e.step}`);
    expect(steps, computers[holder].process.describe()).toEqual(
      expect.arrayContaining(['board board.run.submitted', `${holder} run.process.exited`, 'board board.run.finished']),
    );
    // In time order, the computer's half between the board's submission and its finish.
    expect(audit.entries.map((e) => e.at)).toEqual([...audit.entries.map((e) => e.at)].sort((a, b) => a - b));
    const text = await cliOk(['audit', failed, '--db', board.db]);
    expect(text).toContain(`${holder} run.process.exited`);

    // The run page: the timeline with the computer's half, and the stderr tail its computer recorded.
    const runPage = (await hello(board.url, `?run=${failed}`)) as { record: { stderrTail: string | null }; entries: Entry[] };
    expect(runPage.record.stderrTail).toContain('remote-oops');
    expect(runPage.entries.some((e) => e.owner === holder)).toBe(true);

    // The board page: each computer's slots (also the stopped one's, as last reported) and the lanes' sessions.
    // The running computer's copy lags its log by a batch: its freed slot is shown once its report lands.
    type BoardHello = {
      snapshot: { computers: { id: string; slots: number | null; inUse: number | null }[]; sessions: { computer: string; lane: string }[] };
    };
    let boardPage = (await hello(board.url)) as BoardHello;
    const slotsOf = (page: BoardHello) => Object.fromEntries(page.snapshot.computers.map((c) => [c.id, [c.slots, c.inUse]]));
    await waitFor('both computers shown with a free slot', async () => {
      boardPage = (await hello(board.url)) as BoardHello;
      return JSON.stringify(slotsOf(boardPage)) === JSON.stringify({ c1: [1, 0], c2: [1, 0] });
    });
    // The succeeded turn's session is remembered for its lane's next turn (a failed turn's is not).
    expect(boardPage.snapshot.sessions.map((s) => [s.lane, s.computer])).toEqual([['other', views[1]!.computer_id]]);

    // The board's log holds none of the computers' events: its replay is what it was.
    expect(readLog(board.db).some((row) => row.stream.includes('/'))).toBe(false);
    const still = holder === 'c1' ? computers.c2 : computers.c1;
    await Promise.all([board.process.stop(), still.process.stop()]);
    await checkLogs([board.db, computers.c1.db, computers.c2.db]);
  });
});
