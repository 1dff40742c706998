import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Subscription } from 'rxjs';
import { WebSocket, WebSocketServer } from 'ws';
import type { RunRow } from '../adapters/http/runListing.ts';
import type { RunProgress } from '../adapters/http/runProgress.ts';
import type { DomainEvent } from '../events/catalog.ts';
import { parseStream } from '../events/envelope.ts';
import { messageOf } from '../events/thrown.ts';
import { evolveRunRecord, initialRunRecord, type RunRecord } from '../projections/audit/runRecord.ts';
import type { FailureLog } from '../runtime/actors/untilRecorded.ts';
import { timelineEntry } from '../runtime/audit/runTimeline.ts';
import { type ComputerEvents, mergeInTime } from '../runtime/store/computerEvents.ts';
import type { EventStore } from '../runtime/store/eventStore.ts';
import { boardDelta } from './boardDelta.ts';
import type { BoardSnapshot, RunFacts } from './boardSnapshot.ts';
import { runOf, summarize } from './eventSummary.ts';
import { BATCH_MS, batched, type LiveFeed, newestOfEach, Pacer } from './liveFeed.ts';
import { pageRecord } from './pageRecord.ts';

/** How far back the log is read for a board page's recent decisions: a log that is all bookkeeping lately still answers at once. */
const RECENT_SCAN = 1_000;
/**
 * A page with this much not yet taken by its socket is dropped at once: four first views' worth (a
 * first view is page-sized, see BoardSnapshot); it reconnects, after its backoff, to a fresh one.
 */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/**
 * Each page is pinged this often; one that has not answered the last ping by the next is dropped. A
 * pong comes after everything sent before its ping has been read, so this is also how far behind a
 * page may fall: a frozen or very slow tab costs the board a socket's buffers for this long, no more.
 */
const LIVE_CHECK_MS = 10_000;

export type LiveTarget =
  | { readonly view: 'board' }
  | { readonly view: 'run'; readonly runId: string }
  | { readonly view: 'lane'; readonly lane: string };

/** A lane page's turns: the newest ones, oldest first, and whether older ones were left out. */
export interface LaneTurns {
  readonly turns: readonly RunRow[];
  readonly older: boolean;
}

interface Page {
  readonly ws: WebSocket;
  readonly target: LiveTarget;
  /** Nothing is pushed to a page before its hello: what it missed meanwhile is in the hello. */
  ready: boolean;
  /**
   * Run pages: the last seq sent of each owner's events ('' for the board's), so an entry both read and
   * followed is sent once: a remote computer's reported events count in its own log, not in the board's.
   */
  lastSeqs: Record<string, number>;
  /** Run pages: the run as its events so far tell it. */
  record: RunRecord | null;
  /** Run pages: its events so far, for its facts once it settled and left the board's state (one run's history). */
  events?: DomainEvent[];
  /** Lane pages: the runs its turns show, so that an event about one of them redraws them. */
  runIds?: Set<string>;
  alive: boolean;
  /** Dropped for falling behind: sent nothing more. */
  dropped?: boolean;
}

export interface LiveHubOptions {
  readonly store: Pick<EventStore, 'headSeq' | 'readAll' | 'readEntity'>;
  readonly feed: LiveFeed;
  readonly snapshot: () => BoardSnapshot;
  /** `events`: the run's own, for one that settled and left the board's state. */
  readonly runFacts: (runId: string, events?: readonly DomainEvent[]) => RunFacts | null;
  /** The daemon's log: a page whose start could not be read from the log is told there. */
  readonly log: FailureLog;
  /** What each open run's agent is doing (in the board's memory, not the log): sent to its pages as it changes. */
  readonly progress?: Pick<RunProgress, 'of' | 'changed'>;
  /** The events computers with logs of their own reported (their half of a run), kept apart from the log. */
  readonly reported?: Pick<ComputerEvents, 'readEntity'>;
  /** A lane's conversation as its page shows it; lane pages are refused without it. */
  readonly laneTurns?: (lane: string) => Promise<LaneTurns>;
  /** How often each page must show it keeps up (LIVE_CHECK_MS unless given: tests make it short). */
  readonly liveCheckMs?: number;
}

/**
 * The live socket of the web view (`/v1/live`): a board page gets a hello (its view, page-sized
 * whatever the board holds, numbered, and the log's tail), then each batch of event summaries and,
 * after each burst, a delta from its view to the next (see boardDelta); a run page
 * gets its timeline, then its new entries; a lane page its turns, then them again after each burst of
 * events about the lane or one of its runs. Pages only listen: anything they send is ignored.
 */
export class LiveHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  private readonly boardPages = new Set<Page>();
  private readonly runPages = new Map<string, Set<Page>>();
  private boardFeed: Subscription | null = null;
  /** The board pages' view, as every ready board page holds it, and its number; null while no board page is open. */
  private boardView: { version: number; snapshot: BoardSnapshot } | null = null;
  private readonly boardStatus = new Pacer(() => this.advanceBoardView());
  private runFeed: Subscription | null = null;
  private readonly lanePages = new Map<string, Set<Page>>();
  private laneFeed: Subscription | null = null;
  /** Lanes whose turns are being read, and those to read again once that read is done (one read at a time per lane). */
  private readonly laneReads = new Map<string, { again: boolean }>();
  private readonly progressFeed: Subscription | undefined;
  private readonly pinger: NodeJS.Timeout;

  constructor(private readonly options: LiveHubOptions) {
    this.pinger = setInterval(() => this.ping(), options.liveCheckMs ?? LIVE_CHECK_MS);
    this.pinger.unref();
    // A run nobody watches costs a lookup per change; a watched one's pages get `{type: "progress"}`.
    this.progressFeed = options.progress?.changed.subscribe(({ runId, progress }) => {
      const pages = [...(this.runPages.get(runId) ?? []), ...[...this.lanePages.values()].flatMap((s) => [...s].filter((p) => p.runIds?.has(runId)))];
      if (pages.length === 0) return;
      const text = JSON.stringify({ type: 'progress', runId, progress });
      for (const page of pages) if (page.ready) this.send(page, text);
    });
  }

  accept(request: IncomingMessage, socket: Duplex, head: Buffer, target: LiveTarget): void {
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      const page: Page = { ws, target, ready: false, lastSeqs: {}, record: null, alive: true };
      ws.on('pong', () => (page.alive = true));
      // A socket error (the page went away) is followed by its close, handled below.
      ws.on('error', () => {
        // followed by its close
      });
      ws.on('close', () => this.leave(page));
      this.join(page).catch((error: unknown) => {
        this.options.log(`web view: a live page could not be started (${messageOf(error)}); it is closed and may reconnect`);
        ws.close(1011, 'the log could not be read');
      });
    });
  }

  close(): void {
    clearInterval(this.pinger);
    this.boardStatus.stop();
    this.progressFeed?.unsubscribe();
    this.boardFeed?.unsubscribe();
    this.runFeed?.unsubscribe();
    this.laneFeed?.unsubscribe();
    // Going away (1001): the pages reconnect with their usual backoff and find the board again when it is back.
    for (const ws of this.wss.clients) {
      ws.close(1001, 'the board is shutting down');
      setTimeout(() => ws.terminate(), 1_000).unref();
    }
    this.wss.close();
  }

  private async join(page: Page): Promise<void> {
    const { store } = this.options;
    if (page.target.view === 'board') {
      this.boardPages.add(page);
      this.followBoard();
      // Read after joining the feed: an event is either in this read or delivered after it (or both).
      const head = await store.headSeq();
      const recent = newestOfEach((await store.readAll(Math.max(0, head - RECENT_SCAN), RECENT_SCAN)).map(summarize), (s) => s.bookkeeping);
      // Gone while its start was read: nothing to send.
      if (!this.boardPages.has(page)) return;
      // The view as of now: the pages already open are sent the delta to it, this one the view itself.
      this.boardStatus.now();
      const { version, snapshot } = this.boardView!;
      this.send(page, JSON.stringify({ type: 'hello', view: 'board', version, snapshot, recent }));
      page.ready = true;
      return;
    }
    if (page.target.view === 'lane') {
      const { lane } = page.target;
      (this.lanePages.get(lane) ?? this.lanePages.set(lane, new Set()).get(lane)!).add(page);
      this.followLanes();
      // Read after joining the feed, as for the board page: a turn is in this read or redrawn after it.
      const turns = await this.turnsOf(lane);
      page.runIds = new Set(turns.turns.map((t) => t.run_id));
      this.send(page, JSON.stringify({ type: 'hello', view: 'lane', lane, ...turns }));
      page.ready = true;
      return;
    }
    const { runId } = page.target;
    const watchers = this.runPages.get(runId) ?? this.runPages.set(runId, new Set()).get(runId)!;
    watchers.add(page);
    this.followRuns();
    const own = await store.readEntity(`run:${runId}`);
    const events = mergeInTime(own, (await this.options.reported?.readEntity(`run:${runId}`)) ?? []);
    for (const event of events) {
      const owner = parseStream(event.stream).owner ?? '';
      page.lastSeqs[owner] = Math.max(page.lastSeqs[owner] ?? 0, event.seq);
    }
    const entries = events.map(timelineEntry);
    page.record = events.reduce(evolveRunRecord, initialRunRecord(runId));
    page.events = [...events];
    const record = pageRecord(page.record);
    const progress = this.options.progress?.of(runId) ?? null;
    this.send(page, JSON.stringify({ type: 'hello', view: 'run', runId, run: this.options.runFacts(runId, events), record, entries, progress }));
    page.ready = true;
  }

  private leave(page: Page): void {
    if (page.target.view === 'lane') {
      const pages = this.lanePages.get(page.target.lane);
      pages?.delete(page);
      if (pages?.size === 0) this.lanePages.delete(page.target.lane);
      if (this.lanePages.size === 0) {
        this.laneFeed?.unsubscribe();
        this.laneFeed = null;
      }
      return;
    }
    if (page.target.view === 'board') {
      this.boardPages.delete(page);
      if (this.boardPages.size === 0) {
        this.boardFeed?.unsubscribe();
        this.boardFeed = null;
        this.boardStatus.stop();
        this.boardView = null;
      }
      return;
    }
    const watchers = this.runPages.get(page.target.runId);
    watchers?.delete(page);
    if (watchers?.size === 0) this.runPages.delete(page.target.runId);
    if (this.runPages.size === 0) {
      this.runFeed?.unsubscribe();
      this.runFeed = null;
    }
  }

  private followBoard(): void {
    if (this.boardFeed) return;
    const { feed } = this.options;
    this.boardFeed = feed.summaries().subscribe(({ events, dropped }) => this.broadcast(JSON.stringify({ type: 'events', events, dropped })));
    // Each event is folded as it comes: the view is read again a quarter second after a burst's first
    // (once the pacer allows), not after the summaries' own quarter-second batch as well. Waiting for
    // both drew the lanes half a second late, and a turn that ran in between was never shown.
    this.boardFeed.add(feed.events.subscribe(() => this.boardStatus.ask()));
  }

  /** Reads the board pages' view again and sends the ready ones the delta to it, numbered from the one they hold. */
  private advanceBoardView(): void {
    if (this.boardPages.size === 0) return;
    const snapshot = this.options.snapshot();
    const before = this.boardView;
    if (before === null) {
      this.boardView = { version: 1, snapshot };
      return;
    }
    const delta = boardDelta(before.snapshot, snapshot);
    if (delta === null) return;
    this.boardView = { version: before.version + 1, snapshot };
    this.broadcast(JSON.stringify({ type: 'delta', from: before.version, to: before.version + 1, ...delta }));
  }

  private followRuns(): void {
    if (this.runFeed) return;
    this.runFeed = this.options.feed
      .runEntries((runId) => this.runPages.has(runId))
      .subscribe(({ runId, events }) => {
        for (const page of this.runPages.get(runId) ?? []) {
          if (!page.ready) continue;
          const fresh = freshOf(events, page.lastSeqs);
          if (fresh.length === 0) continue;
          page.events?.push(...fresh);
          const run = this.options.runFacts(runId, page.events);
          page.record = fresh.reduce(evolveRunRecord, page.record ?? initialRunRecord(runId));
          const record = pageRecord(page.record);
          this.send(page, JSON.stringify({ type: 'entries', runId, run, record, entries: fresh.map(timelineEntry) }));
        }
      });
  }

  /** Lane pages: each burst of events redraws the lanes it touches (a submission to it, or an event about a run it shows). */
  private followLanes(): void {
    if (this.laneFeed) return;
    this.laneFeed = this.options.feed.events.pipe(batched(BATCH_MS)).subscribe((events) => {
      const touched = new Set<string>();
      for (const event of events) {
        const { lane } = summarize(event);
        if (lane !== null && this.lanePages.has(lane)) touched.add(lane);
        const runId = runOf(event);
        if (runId === null) continue;
        for (const [name, pages] of this.lanePages) if ([...pages].some((p) => p.runIds?.has(runId))) touched.add(name);
      }
      for (const lane of touched) void this.redrawLane(lane);
    });
  }

  /** Reads a lane's turns again and sends them to its pages; a burst during the read reads once more after it. */
  private async redrawLane(lane: string): Promise<void> {
    const reading = this.laneReads.get(lane);
    if (reading) {
      reading.again = true;
      return;
    }
    const state = { again: true };
    this.laneReads.set(lane, state);
    try {
      while (state.again) {
        state.again = false;
        const turns = await this.turnsOf(lane);
        const text = JSON.stringify({ type: 'turns', lane, ...turns });
        for (const page of this.lanePages.get(lane) ?? []) {
          if (!page.ready) continue;
          page.runIds = new Set(turns.turns.map((t) => t.run_id));
          this.send(page, text);
        }
      }
    } catch (error) {
      this.options.log(`web view: lane ${lane}'s turns could not be read (${messageOf(error)}); its pages show them again with the next event`);
    } finally {
      this.laneReads.delete(lane);
    }
  }

  private turnsOf(lane: string): Promise<LaneTurns> {
    const read = this.options.laneTurns;
    return read ? read(lane) : Promise.resolve({ turns: [], older: false });
  }

  private broadcast(text: string): void {
    for (const page of this.boardPages) if (page.ready) this.send(page, text);
  }

  private send(page: Page, text: string): void {
    const { ws } = page;
    if (page.dropped || ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.drop(page);
      return;
    }
    ws.send(text);
  }

  /**
   * A page too far behind is sent nothing more: it is closed (1013), and cut off a moment later if it
   * does not read the close either. The page reconnects after its backoff to a fresh view.
   */
  private drop(page: Page): void {
    if (page.dropped) return;
    page.dropped = true;
    this.leave(page);
    page.ws.close(1013, 'too far behind: reconnect for a fresh view');
    setTimeout(() => page.ws.terminate(), 1_000).unref();
  }

  private ping(): void {
    const pages = [...this.boardPages, ...[...this.runPages.values(), ...this.lanePages.values()].flatMap((s) => [...s])];
    for (const page of pages) {
      if (!page.alive) {
        this.drop(page);
        continue;
      }
      page.alive = false;
      page.ws.ping();
    }
  }
}

/** Of `events`, those past what `lastSeqs` says was sent of their owner; `lastSeqs` moved past them. */
function freshOf(events: readonly DomainEvent[], lastSeqs: Record<string, number>): DomainEvent[] {
  const fresh: DomainEvent[] = [];
  for (const event of events) {
    const owner = parseStream(event.stream).owner ?? '';
    if (event.seq <= (lastSeqs[owner] ?? 0)) continue;
    lastSeqs[owner] = event.seq;
    fresh.push(event);
  }
  return fresh;
}
