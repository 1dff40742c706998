/**
 * A board on PostgreSQL keeps its computers' reports too (migration 0008), apart from its log: two
 * `runledger server` on one PostgreSQL log and a `daemon --server` on a SQLite log of its own, which
 * reports to the first board. `audit RUN` on the log shows the computer's half of the run, and the
 * second board, to which the computer never reported, shows it on its run page.
 */
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { runInProcess } from '../support/inProcessCli.ts';
import { freshPostgresLog, postgresLogRows, withClient } from '../support/postgresLog.ts';
import { tempDir } from '../support/tempStore.ts';
import {
  addComputer,
  addSubmitToken,
  agentFiles,
  checkLogs,
  startComputer,
  startPostgresServer,
  submit,
  waitFor,
  waitForTerminal,
} from './support/cluster.ts';

interface Entry {
  readonly owner: string | null;
  readonly step: string;
  readonly seq: number;
}

/** The run page's first message (`/v1/live?run=`), as its page opens it. */
function runPage(url: string, runId: string): Promise<{ entries: Entry[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/live?run=${runId}`, { headers: { origin: url } });
    const timer = setTimeout(() => reject(new Error('no hello from the run page')), 10_000);
    ws.once('message', (data) => {
      clearTimeout(timer);
      ws.close();
      resolve(JSON.parse(String(data)) as { entries: Entry[] });
    });
    ws.once('error', reject);
  });
}

describe("a board on PostgreSQL keeps its computers' reports", () => {
  it('audit on the log and the run page of either board show the computer half; the log holds none of it', async () => {
    const url = await freshPostgresLog();
    const dir = tempDir();
    const [token, computerToken] = [await addSubmitToken(url, 'test'), await addComputer(url, 'c1')];
    const [a, b] = await Promise.all([startPostgresServer(url), startPostgresServer(url)]);
    const c1 = await startComputer({ dir, id: 'c1', server: a.url, token: computerToken, agent: agentFiles(dir) });

    const runId = await submit({ url: a.url, token }, 'talk', 'marker=pg sleep=100');
    expect((await waitForTerminal(a.url, runId)).state).toBe('succeeded');
    await c1.process.stop();
    expect(c1.process.stdout).not.toMatch(/keeps no copy|did not reach the board/);

    const audit = JSON.parse((await runInProcess(['audit', runId, '--db', url, '--json'])).stdout) as { entries: Entry[] };
    const steps = audit.entries.map((e) => `${e.owner ?? 'board'} ${e.step}`);
    expect(steps).toEqual(
      expect.arrayContaining(['board board.run.submitted', 'c1 run.process.exited', 'c1 run.settled', 'board board.run.finished']),
    );
    // The second board reads what the computer reported to the first.
    await waitFor('the computer half on the other board', async () => (await runPage(b.url, runId)).entries.some((e) => e.owner === 'c1'));

    // Kept apart: the log holds no computer's event, and its replay and rebuild are what they were.
    expect((await postgresLogRows(url)).some((row) => row.stream.includes('/'))).toBe(false);
    const kept = await withClient(url, (client) => client.query('SELECT count(*)::int AS n, count(DISTINCT seq)::int AS d FROM computer_events'));
    expect(kept.rows[0].n).toBeGreaterThan(0);
    expect(kept.rows[0].n).toBe(kept.rows[0].d);
    await Promise.all([a.process.stop(), b.process.stop()]);
    await checkLogs([url]);
  });
});
