/**
 * The log's view of who is online follows the push streams the boards hold (docs/rules.md#postgresql-board, seed 25 in the
 * regressions): two boards on the simulator's shared log, one computer whose stream board1 holds and
 * keeps open. A full log keeps board1 from renewing the chores' lease and its liveness row; board2 takes
 * the lease once it has expired and, finding no fresh row that holds c1, records c1 offline in its
 * orphan round. board1 still holds the stream: it must record c1 connected again, at once, or once the
 * log takes it, since the computer, whose stream never broke, never connects again of its own.
 * Virtual time, stepped task by task; nothing but the boards and one socket pair runs.
 */
import { describe, expect, it } from 'vitest';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { hashToken } from '../../adapters/http/tokens.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { SimBoards } from '../../sim/boards.ts';
import { SimNetwork } from '../../sim/network.ts';
import { Prng } from '../../sim/prng.ts';
import { SimSocket } from '../../sim/pushLink.ts';
import { exactTimers, Owner, Scheduler, SIM_EPOCH } from '../../sim/scheduler.ts';
import { installSettle, settle } from '../../sim/settle.ts';

const BOARD1 = 'board1-host:1';

async function twoBoards() {
  installSettle();
  const scheduler = new Scheduler();
  const lines: string[] = [];
  const boards = new SimBoards({
    count: 2,
    scheduler,
    fuzz: () => exactTimers,
    leaseMs: 90_000,
    say: (line) => lines.push(`${((scheduler.now - SIM_EPOCH) / 1000).toFixed(3)} ${line}`),
    hooks: { prng: new Prng(1), invoked: () => undefined },
    prng: () => new Prng(2),
  });
  const network = new SimNetwork(scheduler, new Prng(3));
  const [board1, board2] = boards.machines as [SimBoards['machines'][number], SimBoards['machines'][number]];
  const computer = new Owner('c1');

  /** Runs every task due until `at` (ms since the epoch), the event loop settled after each; `stop` ends it early. */
  const runUntil = async (at: number, stop: () => boolean | Promise<boolean> = () => false) => {
    for (;;) {
      if (await stop()) return;
      const task = scheduler.take(SIM_EPOCH + at);
      if (!task) break;
      task.run();
      await settle();
    }
    scheduler.now = Math.max(scheduler.now, SIM_EPOCH + at);
  };
  const log = async (): Promise<DomainEvent[]> => (await boards.log.snapshot()).readAll(0, 1_000_000);
  const online = async () => (await log()).filter((e) => e.stream === 'computer:c1' && /online|offline/.test(e.type));
  const end = () => {
    for (const board of boards.machines) board.crash();
    computer.kill();
    network.owner.kill();
  };

  const first = (await board1.start())!;
  await first.host.actor.input(boardInput.computerAdded('c1', hashToken('token-c1'), first.clock.now()));
  // board2 starts a second later, so each of its lease renewals (every 2.5 s) falls between two of board1's.
  await runUntil(1_000);
  await board2.start();
  // c1's push stream, held by board1 (what sim/computerMachine.ts's connect builds), answered by nobody but its pongs.
  const life = board1.life!;
  const client = new SimSocket(network, 'c1', [computer, life.owner], 'computer');
  const server = new SimSocket(network, 'c1', [life.owner, computer], 'board');
  server.readyState = 1;
  server.peer = client;
  client.peer = server;
  client.open();
  board1.sockets.push(server);
  life.host.push.attach('c1', 'c1-life-1', server.asWebSocket());
  await runUntil(2_000);
  /**
   * The log full from 5.5 s to 15.5 s: board1 last renewed the lease and its row at 5.0 s, so both are stale
   * from 12.5 s, and board2 renews first once the log is writable (16.0 s), before board1 (17.5 s).
   */
  const leaseLostToAFullLog = async () => {
    await runUntil(5_500);
    boards.log.full = true;
    await runUntil(15_500);
    boards.log.full = false;
  };
  return { boards, board1, board2, lines, runUntil, leaseLostToAFullLog, online, end, client, computer };
}

/** `test` on a world of two boards, ended (every life killed) whatever happens. */
async function withTwoBoards(test: (w: Awaited<ReturnType<typeof twoBoards>>) => Promise<void>): Promise<void> {
  const w = await twoBoards();
  try {
    await test(w);
  } finally {
    w.end();
  }
}

/** The types of c1's online and offline records when it was taken offline and recorded connected again. */
const AGAIN = ['board.computer.online', 'board.computer.offline', 'board.computer.online'];

/** Whether the board holds c1 connected through board1 now (each board's own state). */
const connectedVia = async (board: SimBoards['machines'][number]) =>
  board.life!.host.actor.read((state) => (state.connected.includes('c1') ? (state.computers.c1?.via ?? null) : null));

describe('a push stream a live board holds, recorded offline by the other board’s orphan round', () => {
  it('given board1 holding c1’s stream and a log full long enough for board2 to take the lease and orphan c1, then board1 records c1 connected again at once, and it stays so', async () => {
    await withTwoBoards(async (w) => {
      expect((await w.online()).map((e) => e.type)).toEqual(['board.computer.online']);
      await w.leaseLostToAFullLog();
      await w.runUntil(16_500);
      // What the seed met: board2's round recorded c1 offline, though board1 holds its stream.
      const orphaned = (await w.online()).at(1);
      expect(orphaned?.type, w.lines.join('\n')).toBe('board.computer.offline');
      expect(w.client.readyState).toBe(1);

      // At once: before board1's own next renewal (17.5 s).
      await w.runUntil(17_400);
      expect((await w.online()).map((e) => e.type)).toEqual(AGAIN);
      await w.runUntil(60_000);
      expect((await w.online()).length).toBe(3);
      expect(await connectedVia(w.board2)).toBe(BOARD1);
      expect(await connectedVia(w.board1)).toBe(BOARD1);
    });
  });

  it('given the offline recorded just before the log is full again (board1 cannot say it holds c1), then c1 is recorded connected again once the log takes it (its next renewal)', async () => {
    await withTwoBoards(async (w) => {
      await w.leaseLostToAFullLog();
      // The moment board2's orphan round commits c1's offline, the log is full again for 5 s.
      await w.runUntil(20_000, async () => (await w.online()).length === 2);
      expect((await w.online()).at(1)?.type, w.lines.join('\n')).toBe('board.computer.offline');
      w.boards.log.full = true;
      await w.runUntil(21_000);
      expect((await w.online()).length).toBe(2);
      w.boards.log.full = false;
      // board1's renewals fall at 2.5 s steps: the first after the log is writable (22.5 s) writes its row and records c1 again.
      await w.runUntil(23_000);
      expect((await w.online()).map((e) => e.type)).toEqual(AGAIN);
      await w.runUntil(60_000);
      expect(await connectedVia(w.board2)).toBe(BOARD1);
    });
  });

  it('given c1’s process gone silent (its socket half-open on board1: pings unanswered), when board2 orphans it, then board1 does not record it connected again, and its close at the ping timeout changes nothing', async () => {
    await withTwoBoards(async (w) => {
      // Frozen: nothing reaches c1 or comes from it, and no close is sent (a pulled cable, a paused VM).
      w.computer.kill();
      await w.leaseLostToAFullLog();
      await w.runUntil(60_000);
      // The ping at 10 s went unanswered when board2's round took c1 offline (16 s); board1 cut it at 30 s.
      expect(
        (await w.online()).map((e) => e.type),
        w.lines.join('\n'),
      ).toEqual(['board.computer.online', 'board.computer.offline']);
      expect(w.board1.life!.host.push.holds('c1')).toBe(false);
    });
  });
});
