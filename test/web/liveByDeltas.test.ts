/**
 * The board page's live socket on a large board (issue 31): with 50,000 runs queued, the board once
 * sent every page the whole board (16 MB) every quarter second, closed a tab that fell behind, and the
 * tab reconnected for it again and again, halving the drain. A page is now sent a first view the size
 * of a page (counts, the runs served next and every running one, saying how many more), then only
 * what changed; a page that stops reading is dropped, the others go on.
 *
 * The projections here are the real folds (board, queue, sessions, usage, close) over events made in
 * memory, handed to the web view as the daemon's ProjectionKeeper hands them: a log of 100,000 events
 * written to SQLite and folded takes a minute on a loaded machine, the socket and the pages' rules are
 * the same either way.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Subject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { WebRoutes } from '../../apps/board/boardServer.ts';
import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import type { AnyProjection } from '../../projections/projection.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';
import type { OpenedLog } from '../../runtime/store/eventStore.ts';
import type { BoardSnapshot } from '../../web/boardSnapshot.ts';
import { applyDelta } from '../../web/static/boardModel.js';
import { webView } from '../../web/webView.ts';

const FIRST_MESSAGE_BOUND = 256 * 1024;
const READ_BY_THE_VIEW = ['board', 'queue', 'lane-sessions', 'usage', 'close'];

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The daemon's projections as the web view reads them: states by name, and the events they folded. */
class FoldedInMemory {
  readonly folds = new Subject<DomainEvent>();
  private readonly folders = projections.filter((p) => READ_BY_THE_VIEW.includes(p.name)) as AnyProjection[];
  private readonly states = new Map<string, unknown>(this.folders.map((p) => [p.name, p.initial()]));
  private seq = 0;

  state<S>(name: string): S {
    return this.states.get(name) as S;
  }

  fold(event: NewDomainEvent): void {
    const stored = { ...event, seq: ++this.seq, version: 1, cause: null, actor: 'test:1' } as DomainEvent;
    for (const p of this.folders) this.states.set(p.name, p.evolve(this.states.get(p.name), stored));
    this.folds.next(stored);
  }

  /** `runs` runs queued on the board, each on a lane of its own; their ids in submission order. */
  queue(runs: number): string[] {
    const at = Date.now();
    return Array.from({ length: runs }, (_, order) => {
      const runId = randomUUID();
      const lane = `lane-${order}`;
      this.fold({
        stream: `run:${runId}`,
        at,
        type: 'board.run.queued',
        data: { runId, lane, prompt: 'p', agentId: null, timeoutS: null, submittedOrder: order },
      });
      return runId;
    });
  }

  /** A run's whole turn on computer `c1`, as the board records it: claimed, then finished. */
  drain(runId: string): void {
    const at = Date.now();
    this.fold({ stream: `run:${runId}`, at, type: 'board.run.claimed', data: { runId, computerId: 'c1', reason: 'claimed by c1' } });
    this.fold({
      stream: `run:${runId}`,
      at,
      type: 'board.run.finished',
      data: { runId, computerId: 'c1', state: 'succeeded', reason: 'completed: succeeded' },
    });
  }
}

/** A log with nothing in it: the page's "recent decisions" start empty. */
const emptyLog = { headSeq: async () => 0, readAll: async () => [], readEntity: async () => [] } as unknown as OpenedLog;

async function serve(folded: FoldedInMemory, liveCheckMs?: number): Promise<string> {
  const routes: WebRoutes = webView({
    store: emptyLog,
    clock: systemClock,
    projections: folded,
    log: () => {},
    ...(liveCheckMs ? { liveCheckMs } : {}),
  })({
    openReads: true,
    isSubmitToken: () => false,
    rejected: () => {},
  });
  const server: Server = createServer();
  server.on('upgrade', (request, socket, head) => routes.upgrade(request, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  cleanups.push(() => routes.close());
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/live`;
}

interface Tab {
  readonly ws: WebSocket;
  readonly sizes: number[];
  readonly messages: { type: string; [key: string]: unknown }[];
  closed: number | null;
  /** The board as the page holds it: its hello's, with each delta applied. */
  view: BoardSnapshot | null;
}

function open(url: string): Tab {
  const ws = new WebSocket(url);
  const tab: Tab = { ws, sizes: [], messages: [], closed: null, view: null };
  ws.on('message', (data: Buffer) => {
    const message = JSON.parse(String(data)) as Tab['messages'][number];
    tab.sizes.push(data.length);
    tab.messages.push(message);
    if (message.type === 'hello') tab.view = message.snapshot as BoardSnapshot;
    if (message.type === 'delta') tab.view = applyDelta(tab.view, message) as BoardSnapshot;
  });
  ws.on('close', (code) => (tab.closed = code));
  cleanups.push(() => ws.terminate());
  return tab;
}

async function until(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const shownRuns = (view: BoardSnapshot) => view.lanes.flatMap((l) => l.runs.map((r) => r.runId));

describe('the board page on a board of 50,000 queued runs', () => {
  it('a_tab_gets_a_first_message_the_size_of_a_page_then_deltas_and_stays_connected_while_runs_drain', async () => {
    const folded = new FoldedInMemory();
    const runIds = folded.queue(50_000);
    const tab = open(await serve(folded));
    await until('the hello', () => tab.messages.length > 0, 15_000);

    expect(tab.messages[0]!.type).toBe('hello');
    expect(tab.sizes[0]).toBeLessThanOrEqual(FIRST_MESSAGE_BOUND);
    const first = tab.view!;
    expect(first.counts.queued).toBe(50_000);
    // The runs served next are shown, in their order; the rest are counted, not listed.
    const shown = shownRuns(first);
    expect(shown.length).toBeGreaterThan(0);
    expect(new Set(shown)).toEqual(new Set(runIds.slice(0, shown.length)));
    expect(first.more.runs).toBe(50_000 - shown.length);

    // Runs drain, the first ones first, a burst at a time: the changes are sent as deltas. (A walk of
    // 50,000 runs is long on a loaded machine, and the view is read again less often for it: the
    // bursts are not each awaited.)
    for (let i = 0; i < 200; i += 50) {
      for (const runId of runIds.slice(i, i + 50)) folded.drain(runId);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await until('the last delta', () => tab.view!.counts.queued === 50_000 - 200, 15_000);
    const deltas = tab.messages.flatMap((m, i) => (m.type === 'delta' ? [tab.sizes[i]!] : []));
    expect(deltas.length).toBeGreaterThan(0);
    expect(tab.messages.filter((m) => m.type === 'hello')).toHaveLength(1);
    for (const size of deltas) expect(size).toBeLessThanOrEqual(FIRST_MESSAGE_BOUND);
    // What the page holds is what a fresh tab is shown: the next runs, none of the drained ones.
    const fresh = open(tab.ws.url);
    await until("a second tab's hello", () => fresh.view !== null, 15_000);
    expect(tab.view).toEqual({ ...fresh.view, at: tab.view!.at });
    expect(shownRuns(tab.view!)).not.toContain(runIds[0]);
    expect(shownRuns(tab.view!)).toContain(runIds[200]);
    expect(tab.closed).toBeNull();
  });
});

describe('a tab that does not read', () => {
  it('a_stalled_tab_is_dropped_and_the_others_keep_their_deltas', async () => {
    const folded = new FoldedInMemory();
    const runIds = folded.queue(2_000);
    const url = await serve(folded, 300);
    const reader = open(url);
    const stalled = open(url);
    await until('both hellos', () => reader.view !== null && stalled.view !== null);
    // Its socket is read no more, as a frozen or very slow tab's.
    (stalled.ws as unknown as { _socket: { pause(): void } })._socket.pause();

    let drained = 0;
    const dropped = async () => {
      // The board's side: a connection it closed no longer answers; the tab sees the close once it reads.
      (stalled.ws as unknown as { _socket: { resume(): void } })._socket.resume();
      await until('the stalled tab to see its close', () => stalled.closed !== null, 2_000).catch(() => {});
      return stalled.closed !== null;
    };
    for (const deadline = Date.now() + 5_000; Date.now() < deadline && drained < 1_000; ) {
      folded.drain(runIds[drained++]!);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await dropped()).toBe(true);
    await until('the reader to hold every change', () => reader.view!.counts.queued === 2_000 - drained);
    expect(reader.closed).toBeNull();
  });
});
