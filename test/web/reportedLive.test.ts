/**
 * What a remote computer reports reaches the board's open pages as the board's own events do: the board
 * page is sent a delta once a report's events are folded (a computer's slot freed by its turn's end is
 * told to the board only by its report, after the board's last event of that run), and a run page is
 * sent that computer's entries of its run. Each entry once, though the computer's seqs count in its own
 * log and overlap the board's.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Subject } from 'rxjs';
import { afterEach, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { WebRoutes } from '../../apps/board/boardServer.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import { ProjectionKeeper } from '../../runtime/folds/keeper/projectionKeeper.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';
import type { ReportedRow } from '../../runtime/store/computerEvents.ts';
import { sqliteComputerEvents } from '../../runtime/store/sqlite/computerEventsTable.ts';
import type { BoardSnapshot } from '../../web/boardSnapshot.ts';
import { webView } from '../../web/webView.ts';
import { BoardPageView } from '../support/boardPageView.ts';
import { openTempStore } from '../support/tempStore.ts';

const RUN = '5d1e2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function row(seq: number, stream: string, version: number, type: string, data: unknown): ReportedRow {
  return { seq, stream, version, type, data, at: Date.now(), cause: null, actor: 'c2-host:1' };
}

/** A live page's socket: every message, and a board page's view as the page holds it. */
function socket(port: number, query = ''): { messages: Record<string, unknown>[]; view: BoardPageView<BoardSnapshot> } {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/live${query}`);
  cleanups.push(() => ws.terminate());
  const messages: Record<string, unknown>[] = [];
  const view = new BoardPageView<BoardSnapshot>();
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as Record<string, unknown> & { type: string };
    messages.push(message);
    view.take(message);
  });
  return { messages, view };
}

it('a report kept is pushed to the open board page and run page, each entry once', async () => {
  const store = await openTempStore();
  const keeper = new ProjectionKeeper(store, projections, systemClock);
  await keeper.start();
  cleanups.push(() => keeper.stop());
  const reported = sqliteComputerEvents(store.db)!;
  const reports = new Subject<void>();
  const routes: WebRoutes = webView({ store, clock: systemClock, projections: keeper, log: () => {}, reported })({
    openReads: true,
    isSubmitToken: () => false,
    rejected: () => {},
    reports,
  });
  cleanups.push(() => routes.close());
  const server: Server = createServer();
  server.on('upgrade', (request, socket, head) => routes.upgrade(request, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;

  // The board's own log holds one event of the run: its seq, 1, is also the computer's first seq.
  await store.append({
    expected: { [`run:${RUN}`]: 0 },
    events: [
      {
        stream: `run:${RUN}`,
        type: 'board.run.queued',
        data: { runId: RUN, lane: 'talk', prompt: 'hi', agentId: null, timeoutS: null, submittedOrder: 0 },
        at: Date.now(),
      },
    ],
  });
  const board = socket(port);
  const run = socket(port, `?run=${RUN}`);
  await until('both hellos', () => board.messages.length > 0 && run.messages.length > 0);
  const slotsOfC2 = () => board.view.view?.computers.find((c) => c.id === 'c2')?.slots ?? null;
  expect(slotsOfC2()).toBeNull();

  await reported.record('c2', [
    row(1, 'c2/computer:c2', 1, 'computer.configured', { slots: 3, loginCapacity: {} }),
    row(2, 'c2/lane:talk', 1, 'run.queued', { runId: RUN, lane: 'talk', agentId: null, arrival: 0 }),
  ]);
  reports.next();
  // Nothing happens on the board's own log: the report alone brings the page its status and entries.
  await until('the board page shown c2 with 3 slots', () => slotsOfC2() === 3);
  await until('the run page sent c2 entry', () => run.messages.some((m) => m.type === 'entries'));
  const entries = run.messages.filter((m) => m.type === 'entries').flatMap((m) => m.entries as { owner: string | null; seq: number }[]);
  expect(entries.map((e) => [e.owner, e.seq])).toEqual([['c2', 2]]);

  // The same rows again (a resend) are kept once and shown once; the next one is shown.
  await reported.record('c2', [
    row(2, 'c2/lane:talk', 1, 'run.queued', { runId: RUN, lane: 'talk', agentId: null, arrival: 0 }),
    row(3, 'c2/lane:talk', 2, 'run.claim.started', { runId: RUN, attempt: 1 }),
  ]);
  reports.next();
  await until('the next entry', () => run.messages.filter((m) => m.type === 'entries').length === 2);
  const all = run.messages.filter((m) => m.type === 'entries').flatMap((m) => m.entries as { owner: string | null; seq: number }[]);
  expect(all.map((e) => [e.owner, e.seq])).toEqual([
    ['c2', 2],
    ['c2', 3],
  ]);

  // A session the computer remembers for its lane: shown on the open page, which holds what a fresh tab is shown.
  await reported.record('c2', [row(4, `c2/run:${RUN}`, 1, 'lane.session.remembered', { lane: 'talk', sessionId: 'sess-1', runId: RUN })]);
  reports.next();
  await until(
    "the board page shown c2's session",
    () => board.view.view?.sessions.some((s) => s.computer === 'c2' && s.sessionId === 'sess-1') === true,
  );
  const fresh = socket(port);
  await until("a fresh tab's hello", () => fresh.view.view !== null);
  // The delta a new tab's hello sends the open ones may land just after that hello.
  const held = () => ({ ...board.view.view!, at: 0 });
  await until(
    'the open page holding what the fresh tab is shown',
    () => JSON.stringify(held()) === JSON.stringify({ ...fresh.view.view!, at: 0 }),
  ).catch(() => {});
  expect(held()).toEqual({ ...fresh.view.view, at: 0 });
});
