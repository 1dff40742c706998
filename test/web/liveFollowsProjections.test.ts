/**
 * The board page's live status is read from the daemon's projections: it must be sent after they have
 * folded what called for it. Two followers of one log do not hear of a commit at the same moment (another
 * writer's commit reaches each at its own poll), so a status prompted by the view's own follower could be
 * read before the projections held the commit, and, with nothing else happening, the page kept the state
 * before it: a computer's copy of a run shown `claiming` for seconds after its `run.parked` (the fold test
 * of history.browser.test.ts, seen once on CI). Here the projections' follower is made late on purpose:
 * they follow the log through a second connection that hears of commits only when the test wakes it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { afterEach, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { QueueState } from '../../actors/lane/queueState.ts';
import type { WebRoutes } from '../../apps/board/boardServer.ts';
import type { NewDomainEvent } from '../../events/catalog.ts';
import { WAITS_FOR_EARLIER_TURN } from '../../events/queueReasons.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import { ProjectionKeeper } from '../../runtime/folds/keeper/projectionKeeper.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';
import { openSqliteStore, type SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import type { BoardSnapshot } from '../../web/boardSnapshot.ts';
import { SNAPSHOT_MAX_MS, SNAPSHOT_MS } from '../../web/liveFeed.ts';
import { applyDelta } from '../../web/static/boardModel.js';
import { webView } from '../../web/webView.ts';

const LANE = 'fold';
const RUN = '7b6d3c1e-5f0a-4e2b-9c8d-1a2b3c4d5e6f';
const STREAM = `c2/lane:${LANE}`;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function append(store: SqliteEventStore, events: Omit<NewDomainEvent, 'stream' | 'at'>[]): Promise<unknown> {
  const at = Date.now();
  return store.append({ expected: { [STREAM]: 'any' }, events: events.map((e) => ({ ...e, stream: STREAM, at }) as NewDomainEvent) });
}

/** How run RUN stands in lane LANE of a status snapshot (undefined: not shown). */
function stateOf(snapshot: BoardSnapshot): string | undefined {
  return snapshot.lanes.find((l) => l.lane === LANE)?.runs.find((r) => r.runId === RUN)?.state;
}

it('a_live_status_is_read_after_the_projections_folded_what_called_for_it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runledger-live-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'log.db');
  // The view's connection hears its own commits at once; the projections' only when woken.
  const writer = await openSqliteStore(db, { sync: 'normal' });
  cleanups.push(() => writer.close());
  const wake = new Subject<void>();
  const late = await openSqliteStore(db, { sync: 'normal', pollMs: 600_000, unwatched: true, wakes: wake });
  cleanups.push(() => late.close());
  const keeper = new ProjectionKeeper(late, projections, systemClock);
  await keeper.start();
  cleanups.push(() => keeper.stop());
  const queue = () => keeper.state<Record<string, QueueState>>('queue').c2?.runs[RUN]?.status;

  // The board took the run in (a copy of a run the board does not hold is not shown).
  await writer.append({
    expected: { [`run:${RUN}`]: 0 },
    events: [
      {
        stream: `run:${RUN}`,
        type: 'board.run.queued',
        data: { runId: RUN, lane: LANE, prompt: 'hi', agentId: null, timeoutS: null, submittedOrder: 0 },
        at: Date.now(),
      },
    ],
  });
  await append(writer, [
    { type: 'run.queued', data: { runId: RUN, lane: LANE, agentId: null, arrival: 0 } },
    { type: 'run.claim.started', data: { runId: RUN, attempt: 1 } },
  ]);
  wake.next();
  await until('the projections to hold the claim', () => queue() === 'claiming');

  const routes: WebRoutes = webView({ store: writer, clock: systemClock, projections: keeper, log: () => {} })({
    openReads: true,
    isSubmitToken: () => false,
    rejected: () => {},
  });
  const server: Server = createServer();
  server.on('upgrade', (request, socket, head) => routes.upgrade(request, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  cleanups.push(() => routes.close());
  const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/live`);
  cleanups.push(() => ws.terminate());
  // The page's view after its hello and after each delta, as the page applies them.
  const statuses: BoardSnapshot[] = [];
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as { type: string; snapshot?: BoardSnapshot };
    if (message.type === 'hello') statuses.push(message.snapshot!);
    if (message.type === 'delta') statuses.push(applyDelta(statuses.at(-1)!, message));
  });
  await until('the hello', () => statuses.length === 1);
  await sleep(2 * SNAPSHOT_MS);
  for (const status of statuses) expect(stateOf(status)).toBe('claiming');
  const before = statuses.length;

  // The board answered conversation_busy: the run is parked. The view's connection has it at once, the
  // projections not yet.
  await append(writer, [
    { type: 'claim.answered', data: { runId: RUN, status: 409, code: 'conversation_busy' } },
    {
      type: 'run.parked',
      data: { runId: RUN, busyWaits: 1, notBefore: Date.now() + 30_000, reason: WAITS_FOR_EARLIER_TURN, logged: true },
    },
  ]);
  await sleep(2 * SNAPSHOT_MS);
  expect(queue()).toBe('claiming');
  // Then they fold it, and nothing else happens on the board: the page must be sent the parked run.
  wake.next();
  await until('the projections to hold the park', () => queue() === 'waiting');
  // Within the pacer's widest spacing (a walk that took long, as the hello's first one may on a loaded
  // machine, puts the next off up to SNAPSHOT_MAX_MS), and the burst's batch.
  await until(
    'a status showing the run parked',
    () => statuses.length > before && stateOf(statuses.at(-1)!) === 'parked',
    SNAPSHOT_MAX_MS + 4 * SNAPSHOT_MS,
  );
  // And none was read from projections that had not folded the events it was sent after.
  for (const status of statuses.slice(before)) expect(stateOf(status)).toBe('parked');
});
