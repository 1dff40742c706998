/**
 * The board sees the whole run: one `runledger server` and two `daemon --server`, each on a log of its
 * own (real processes). Each computer sends the board a copy of its runs', lanes' and sessions' events
 * after commit; the board keeps them apart from its log and shows them: `audit RUN`, the run page (its
 * live socket's JSON), the board page's sessions and each computer's slots, also once the computer
 * that ran the turn has been stopped. The board's `replay` is untouched by them. The two groups of
 * cases, each on a board and computers of its own, run at once (describe.concurrent); the cases of the
 * shared board one after the other.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { WebSocket } from 'ws';
import { BoardPageView } from '../support/boardPageView.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';
import { ownScope } from '../support/testScope.ts';
import { claudeLikeAgent } from '../web/webSupport.ts';
import {
  addComputer,
  type BoardProcess,
  CliProcess,
  checkLogs,
  connectedComputers,
  freePort,
  type Lifetime,
  MARKER_AGENT,
  readLog,
  startBoard,
  startCli,
  submit,
  waitFor,
  waitForState,
  waitForTerminal,
} from './support/cluster.ts';

async function joinBoard(dir: string, board: BoardProcess, id: string, exec = claudeLikeAgent(), lifetime: Lifetime = {}) {
  const token = await addComputer(board.db, id);
  return startDaemon(dir, board, id, token, exec, lifetime);
}

/**
 * `daemon --server` as computer `id` on its own log in `dir` (the same log again for a next life), once
 * its push stream is up. Its agent: one that announces sessions, unless `exec` says another.
 */
async function startDaemon(dir: string, board: BoardProcess, id: string, token: string, exec = claudeLikeAgent(), lifetime: Lifetime = {}) {
  const db = `${dir}/${id}/${id}.db`;
  const args = ['daemon', '--server', board.url, '--computer', id, '--token', token, '--db', db, '--heartbeat-s', '1', '--exec', exec];
  const process = lifetime.shared ? new CliProcess(args) : startCli(args);
  await process.waitForOutput(/push stream connected/);
  return { db, token, process };
}

const REPORTED = /^[^/]+\/(run|lane|session|computer):/;

/** The events of `computer`'s log that it reports (its own runs', lanes', sessions' and its own), as `seq stream@version type`. */
function reportedPart(db: string, computer: string): string[] {
  return readLog(db)
    .filter((row) => row.stream.startsWith(`${computer}/`) && REPORTED.test(row.stream))
    .map((row) => `${row.seq} ${row.stream} ${row.type}`);
}

/** The board's copy of `computer`'s events, as `reportedPart` says them, in the computer's seq order. */
function boardCopy(boardDb: string, computer: string): string[] {
  const connection = new Database(boardDb, { readonly: true, fileMustExist: true });
  try {
    const rows = connection.prepare('SELECT seq, stream, type FROM computer_events WHERE computer = ? ORDER BY seq').all(computer) as {
      seq: number;
      stream: string;
      type: string;
    }[];
    return rows.map((row) => `${row.seq} ${row.stream} ${row.type}`);
  } finally {
    connection.close();
  }
}

/** Until `db` (a computer's log) holds `type` of `runId`: a turn that ended there while the board was away. */
function waitForLogged(db: string, runId: string, type: string) {
  return waitFor(`${type} of ${runId} in ${db}`, () => readLog(db).some((row) => row.type === type && row.data.runId === runId));
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

type Snapshot = {
  computers: { id: string; slots: number | null; inUse: number | null }[];
  sessions: { computer: string; lane: string }[];
};

/** A board page's live socket, open from now on: the view it holds (its hello's, then each delta applied). */
function liveBoard(url: string): Promise<{ latest: () => Snapshot; close: () => void }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/live`, { headers: { origin: url } });
    const page = new BoardPageView<Snapshot>();
    const timer = setTimeout(() => reject(new Error('no hello from the board page')), 10_000);
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; view?: string };
      page.take(message);
      if (message.type === 'hello') {
        clearTimeout(timer);
        resolve({ latest: () => page.view!, close: () => ws.close() });
      }
    });
    ws.once('error', reject);
  });
}

const FREE: Snapshot = {
  computers: [
    { id: 'c1', slots: 1, inUse: 0 },
    { id: 'c2', slots: 1, inUse: 0 },
  ],
  sessions: [],
};
const slotsOf = (snapshot: Snapshot) => JSON.stringify(Object.fromEntries(snapshot.computers.map((c) => [c.id, [c.slots, c.inUse]])));

interface Entry {
  readonly owner: string | null;
  readonly step: string;
  readonly at: number;
}

describe.concurrent("the board shows a remote computer's half of each run", () => {
  it(
    'in audit, on the run page, in sessions and slots, after the computer stopped; replay of the board unchanged',
    ownScope(async ({ expect }) => {
      const dir = tempDir();
      const board = await startBoard(`${dir}/board/board.db`);
      const computers = { c1: await joinBoard(dir, board, 'c1'), c2: await joinBoard(dir, board, 'c2') };
      await waitFor('both computers on the push stream', async () => (await connectedComputers(board.url)) === 2);
      const live = await liveBoard(board.url);

      const failed = await submit(board, 'talk', 'sleep=200 stderr=remote-oops exit=3');
      const other = await submit(board, 'other', 'sleep=200');
      const views = await Promise.all([waitForTerminal(board.url, failed), waitForTerminal(board.url, other)]);
      expect(views.map((v) => v.state)).toEqual(['failed', 'succeeded']);
      const holder = views[0]!.computer_id as 'c1' | 'c2';
      // The board page, live: each computer's slot freed by its turn's end, which the board hears of only in
      // that computer's report (after the board's last event of the run): pushed to a page open all along.
      await waitFor('both computers shown with a free slot on the open board page', () => slotsOf(live.latest()) === slotsOf(FREE));
      live.close();

      // Stopped (drained): what it recorded of its last turn reached the board before it went.
      await computers[holder].process.stop();
      await waitFor('the computer to leave the push stream', async () => (await connectedComputers(board.url)) === 1);
      // All of it, each event once: the board's copy is the reported part of the computer's log.
      expect(boardCopy(board.db, holder)).toEqual(reportedPart(computers[holder].db, holder));

      const audit = JSON.parse((await runInProcess(['audit', failed, '--db', board.db, '--json'])).stdout) as { streams: string[]; entries: Entry[] };
      expect(audit.streams).toEqual(expect.arrayContaining([`run:${failed}`, `${holder}/run:${failed}`]));
      const steps = audit.entries.map((e) => `${e.owner ?? 'board'} ${e.step}`);
      expect(steps, computers[holder].process.describe()).toEqual(
        expect.arrayContaining(['board board.run.submitted', `${holder} run.process.exited`, 'board board.run.finished']),
      );
      // In time order, the computer's half between the board's submission and its finish.
      expect(audit.entries.map((e) => e.at)).toEqual([...audit.entries.map((e) => e.at)].sort((a, b) => a - b));
      const text = (await runInProcess(['audit', failed, '--db', board.db])).stdout;
      expect(text).toContain(`${holder} run.process.exited`);

      // The run page: the timeline with the computer's half, and the stderr tail its computer recorded.
      const runPage = (await hello(board.url, `?run=${failed}`)) as { record: { stderrTail: string | null }; entries: Entry[] };
      expect(runPage.record.stderrTail).toContain('remote-oops');
      expect(runPage.entries.some((e) => e.owner === holder)).toBe(true);

      // The board page after the stop: the stopped computer's slots as last reported, and the lanes' sessions.
      const boardPage = (await hello(board.url)) as { snapshot: Snapshot };
      expect(slotsOf(boardPage.snapshot)).toEqual(slotsOf(FREE));
      // The succeeded turn's session is remembered for its lane's next turn (a failed turn's is not).
      expect(boardPage.snapshot.sessions.map((s) => [s.lane, s.computer])).toEqual([['other', views[1]!.computer_id]]);

      // The board's log holds none of the computers' events: its replay is what it was.
      expect(readLog(board.db).some((row) => row.stream.includes('/'))).toBe(false);
      const still = holder === 'c1' ? 'c2' : 'c1';
      await computers[still].process.stop();
      expect(boardCopy(board.db, still)).toEqual(reportedPart(computers[still].db, still));
      await board.process.stop();
      await checkLogs([board.db, computers.c1.db, computers.c2.db]);
      // Five real processes started one after another (each several seconds on a loaded machine): its own bound.
    }),
    120_000,
  );
});

/**
 * A board that goes away while a turn ends on its computer, twice: once the computer lives on, once it
 * is killed before it could send. One board (on one port, restarted in each test) and computer c1 for
 * both, each test's turn its own, one after the other (it.sequential); a test leaves them up, the board's
 * and c1's last lives stopped after both.
 */
describe.concurrent('a board away while a turn ends on its computer', () => {
  let dir: string;
  let port: number;
  let board: BoardProcess;
  let c1: Awaited<ReturnType<typeof startDaemon>>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'runledger-test-'));
    port = await freePort();
    board = await startBoard(`${dir}/board/board.db`, { port, shared: true });
    c1 = await joinBoard(dir, board, 'c1', MARKER_AGENT, { shared: true });
  });
  afterAll(async () => {
    await c1?.process.stop();
    await board?.process.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.sequential(
    'restarted, it gets that half after, each event once',
    ownScope(async ({ expect }) => {
      const gate = join(dir, 'gate-away');
      const runId = await submit(board, 'talk', `marker=away gate=${gate}`);
      await waitForState(board.url, runId, ['running']);
      await board.process.stop();
      // Its turn ends while the board is away: what it recorded of it cannot be sent.
      writeFileSync(gate, '');
      await waitForLogged(c1.db, runId, 'run.process.exited');

      board = await startBoard(board.db, { port, shared: true });
      expect((await waitForTerminal(board.url, runId)).state).toBe('succeeded');
      // Sent once the board is back (its push stream connected again cuts the report's retry wait short).
      await waitFor('the computer half of the turn on the board', () =>
        boardCopy(board.db, 'c1').some((e) => e.endsWith(`/run:${runId} run.process.exited`)),
      );
      // The rest of the turn's end follows (c1 lives on): all of it, each event once.
      await waitFor('the board’s copy of all c1 reported', () => boardCopy(board.db, 'c1').length >= reportedPart(c1.db, 'c1').length);
      expect(boardCopy(board.db, 'c1')).toEqual(reportedPart(c1.db, 'c1'));
    }),
  );

  it.sequential(
    'its computer killed (SIGKILL) with its half of a turn unsent: its next life sends it, each event once',
    ownScope(async ({ expect }) => {
      const gate = join(dir, 'gate-unsent');
      const runId = await submit(board, 'unsent', `marker=unsent gate=${gate}`);
      await waitForState(board.url, runId, ['running']);
      // The board away, the turn ends on the computer, and the computer dies before it could send it.
      await board.process.stop();
      writeFileSync(gate, '');
      await waitForLogged(c1.db, runId, 'run.process.exited');
      c1.process.kill('SIGKILL');
      await c1.process.exited;
      const unsent = reportedPart(c1.db, 'c1').filter((event) => !boardCopy(board.db, 'c1').includes(event));
      expect(unsent.some((event) => event.endsWith(' run.process.exited'))).toBe(true);

      board = await startBoard(board.db, { port, shared: true });
      c1 = await startDaemon(dir, board, 'c1', c1.token, MARKER_AGENT, { shared: true });
      expect((await waitForTerminal(board.url, runId)).state).toBe('succeeded');
      await c1.process.stop();
      // The last life's unsent events and this life's, each once (the board keeps a computer's seq once).
      expect(boardCopy(board.db, 'c1')).toEqual(reportedPart(c1.db, 'c1'));
    }),
  );
});
