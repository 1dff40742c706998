/**
 * Issue 28's wire proof on separate logs: one `runledger server` and two `daemon --server`, each on a
 * log of its own, 30 turns of five lanes submitted at once, so both computers are offered every turn and
 * contend for the claims. A board page's live socket is open all along: no finished run is shown at any
 * moment after it finished (a delta is sent within a second of what calls for it), and at the end
 * each computer is shown with its slot free, from what it reported. Each computer's report is then the
 * reported part of its log, each event once.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { BoardPageView } from '../support/boardPageView.ts';
import { tempDir } from '../support/tempStore.ts';
import { claudeLikeAgent } from '../web/webSupport.ts';
import { addComputer, connectedComputers, readLog, startBoard, startCli, submit, waitFor, waitForAllTerminal } from './support/cluster.ts';

interface Row {
  readonly runId: string;
  readonly state: string;
}
interface Snapshot {
  readonly computers: { id: string; slots: number | null; inUse: number | null }[];
  readonly lanes: { lane: string; runs: Row[] }[];
}

const REPORTED = /^[^/]+\/(run|lane|session|computer):/;

describe('30 contended turns across two computers on logs of their own', () => {
  it('no finished run shown at any moment; each computer shown with its slot free at the end; its report whole and once', async () => {
    const dir = tempDir();
    const board = await startBoard(`${dir}/board/board.db`);
    const computers = await Promise.all(
      ['c1', 'c2'].map(async (id) => {
        const token = await addComputer(board.db, id);
        const db = `${dir}/${id}/${id}.db`;
        const process = startCli(['daemon', '--server', board.url, '--computer', id, '--token', token, '--db', db, '--exec', claudeLikeAgent()]);
        await process.waitForOutput(/push stream connected/);
        return { id, db, process };
      }),
    );
    await waitFor('both computers on the push stream', async () => (await connectedComputers(board.url)) === 2);

    // Every row the page shows, each time its view changes (its hello's, then each delta applied), with when.
    const drawn: { runId: string; state: string; at: number }[] = [];
    const page = new BoardPageView<Snapshot>();
    const ws = new WebSocket(`${board.url.replace('http', 'ws')}/v1/live`, { headers: { origin: board.url } });
    ws.on('message', (data) => {
      if (!page.take(JSON.parse(String(data)) as { type: string; view?: string })) return;
      const at = Date.now();
      for (const lane of page.view!.lanes) for (const row of lane.runs) drawn.push({ runId: row.runId, state: row.state, at });
    });
    await waitFor('the board page', () => page.view !== null);

    const lanes = ['l1', 'l2', 'l3', 'l4', 'l5'];
    const runs = await Promise.all(Array.from({ length: 30 }, (_, i) => submit(board, lanes[i % lanes.length]!, `sleep=50 turn ${i}`)));
    const views = await waitForAllTerminal(board.url, runs, 45_000);
    expect(views.map((v) => v.state)).toEqual(runs.map(() => 'succeeded'));
    expect(new Set(views.map((v) => v.computer_id))).toEqual(new Set(['c1', 'c2']));

    const free = JSON.stringify({ c1: [1, 0], c2: [1, 0] });
    const slotsOf = (snapshot: Snapshot) => JSON.stringify(Object.fromEntries(snapshot.computers.map((c) => [c.id, [c.slots, c.inUse]])));
    await waitFor('both computers shown with their slot free', () => page.view !== null && slotsOf(page.view) === free);
    expect(page.view!.lanes.flatMap((l) => l.runs)).toEqual([]);
    ws.close();

    const finishedAt = new Map<string, number>();
    for (const runId of runs) {
      const details = (await (await fetch(`${board.url}/v1/runs/${runId}/details`)).json()) as { finished_at: string };
      finishedAt.set(runId, Date.parse(details.finished_at));
    }
    expect(drawn.length).toBeGreaterThan(0);
    // When a view is drawn is when this process read it: on a loaded machine (four times this one's
    // load) its own turns came over a second late, so the board's second is given two more.
    const stale = drawn.filter((d) => d.at > (finishedAt.get(d.runId) ?? Number.POSITIVE_INFINITY) + 3_000);
    expect(stale).toEqual([]);

    await Promise.all(computers.map((c) => c.process.stop()));
    const copy = new Database(board.db, { readonly: true, fileMustExist: true });
    try {
      for (const { id, db } of computers) {
        const kept = copy.prepare('SELECT seq, stream, type FROM computer_events WHERE computer = ? ORDER BY seq').all(id) as {
          seq: number;
          stream: string;
          type: string;
        }[];
        const logged = readLog(db).filter((row) => row.stream.startsWith(`${id}/`) && REPORTED.test(row.stream));
        expect(kept.map((r) => `${r.seq} ${r.stream} ${r.type}`)).toEqual(logged.map((r) => `${r.seq} ${r.stream} ${r.type}`));
      }
    } finally {
      copy.close();
    }
    await board.process.stop();
    // 30 turns of real processes: its own bound (vitest.config.ts), twice what it takes on a loaded machine.
  }, 120_000);
});
