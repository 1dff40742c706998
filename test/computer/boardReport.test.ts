/**
 * A computer's report to its board (BoardReport) against a stand-in board, on a real SQLite log: every
 * event of the computer's reported streams reaches the board once it is committed, whatever the timing
 * of the commits against the calls, and across a board that is away, a stop and a restart. The board
 * keeps each (computer, seq) once, as the real one does; a test also counts what was sent twice.
 */
import { describe, expect, it } from 'vitest';
import type { BoardAnswer } from '../../adapters/http/boardClient.ts';
import { BoardReport } from '../../apps/computer/boardReport.ts';
import type { NewEvent } from '../../events/envelope.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import type { ReportedRow } from '../../runtime/store/computerEvents.ts';
import type { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { openTempStore, tempDbPath } from '../support/tempStore.ts';

const queued = (owner: string, runId: string, arrival: number): NewEvent => ({
  stream: `${owner}/lane:talk`,
  type: 'run.queued',
  data: { runId, lane: 'talk', agentId: null, arrival },
  at: Date.now(),
});

/** A board that keeps rows by seq, answering `status()` (200 unless told otherwise), and resolves waits on what it holds. */
class StandInBoard {
  readonly held = new Map<number, ReportedRow>();
  calls = 0;
  resent = 0;
  status: (rows: readonly ReportedRow[]) => number = () => 200;
  private waits: { seqs: number[]; resolve: () => void }[] = [];

  send = async (rows: readonly ReportedRow[]): Promise<BoardAnswer> => {
    this.calls++;
    // A call takes a little while, as over a socket: commits land during it.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const status = this.status(rows);
    if (status !== 200) return { status, body: { detail: { error: 'stand_in', message: 'refused' } } };
    for (const row of rows) {
      if (this.held.has(row.seq)) this.resent++;
      this.held.set(row.seq, row);
    }
    const met = this.waits.filter((w) => w.seqs.every((s) => this.held.has(s)));
    this.waits = this.waits.filter((w) => !met.includes(w));
    for (const w of met) w.resolve();
    return { status: 200, body: { through: Math.max(...rows.map((r) => r.seq)), kept: rows.length } };
  };

  /** Resolves once every seq is held; fails naming what is missing after `ms`. */
  holds(seqs: number[], ms = 10_000): Promise<void> {
    if (seqs.every((s) => this.held.has(s))) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the board lacks ${seqs.filter((s) => !this.held.has(s)).join(', ')}`)), ms);
      this.waits.push({
        seqs,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }
}

async function append(store: SqliteEventStore, events: NewEvent[]): Promise<number[]> {
  const result = await store.append({ expected: Object.fromEntries(events.map((e) => [e.stream, 'any' as const])), events });
  if (!result.ok) throw new Error('not appended');
  return result.events.map((e) => e.seq);
}

function report(store: SqliteEventStore, board: StandInBoard, lines: string[] = []) {
  return new BoardReport({ store, computer: 'c1', send: board.send, clock: systemClock, log: (line) => lines.push(line), random: () => 0.5 });
}

describe("a computer's report to its board", () => {
  it('sends every reported event, in seq order and once, whatever the commits do during a call; leaves out other owners and kinds', async () => {
    const store = await openTempStore();
    const board = new StandInBoard();
    const sender = report(store, board);
    await sender.start();
    const mine: number[] = [];
    // Bursts that land while a call is in flight, right after one ended, and alone: each must arrive.
    for (let i = 0; i < 30; i++) {
      const seqs = await append(store, [queued('c1', `r${i}`, i), queued('c2', `x${i}`, i)]);
      mine.push(seqs[0]!);
      if (i % 7 === 0) await board.holds(mine);
      else await new Promise((resolve) => setTimeout(resolve, i % 3 === 0 ? 0 : 3 * i));
    }
    await board.holds(mine);
    expect([...board.held.keys()].sort((a, b) => a - b)).toEqual(mine);
    expect(board.resent).toBe(0);
    // Quiet: the report rests until the next commit, and that one still goes.
    const [last] = await append(store, [queued('c1', 'late', 99)]);
    await board.holds([last!]);
    await sender.stop();
  });

  it('a commit heard during a call, sent by that pass, leaves a gather timer that finds nothing to send: the next commit still goes', async () => {
    // The flake of the first version (computerHalf: a stopped computer's 12 events left unsent, a freed
    // slot never shown): that timer's pass, with nothing pending, ended before it was recorded as the
    // pass under way, and every later pass, the stop's included, took that ended one for the one running.
    const store = await openTempStore();
    const board = new StandInBoard();
    const during: number[] = [];
    const send = board.send;
    board.send = async (rows) => {
      if (board.calls === 0) {
        during.push(...(await append(store, [queued('c1', 'during', 1)])));
        // Heard by the feed (and its gather timer armed) while this call is in flight.
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      return send(rows);
    };
    const sender = report(store, board);
    await sender.start();
    const first = await append(store, [queued('c1', 'first', 0)]);
    await board.holds([...first, ...during]);
    // The timer armed during the first call fires now, after the pass that sent both ended.
    await new Promise((resolve) => setTimeout(resolve, 250));
    const next = await append(store, [queued('c1', 'next', 2)]);
    await board.holds(next, 3_000);
    const last = await append(store, [queued('c1', 'last', 3)]);
    await sender.stop();
    expect(board.held.has(last[0]!)).toBe(true);
  });

  it('a stop sends what the log holds past the last batch, the drain commits just before it included', async () => {
    const store = await openTempStore();
    const board = new StandInBoard();
    const lines: string[] = [];
    const sender = report(store, board, lines);
    await sender.start();
    const first = await append(store, [queued('c1', 'a', 0)]);
    await board.holds(first);
    // Committed, and at once stopped: not yet heard by the feed nor gathered into a batch.
    const last = await append(store, [queued('c1', 'b', 1), queued('c1', 'c', 2)]);
    await sender.stop();
    expect([...board.held.keys()]).toEqual([...first, ...last]);
    expect(lines.filter((l) => l.includes('did not reach'))).toEqual([]);
  });

  it('a board away: sent again until it takes them, at once when it is back; a stop past its bound says how many are left, the next life sends them', async () => {
    const path = tempDbPath();
    const store = await openTempStore(path);
    const board = new StandInBoard();
    let away = true;
    board.status = () => (away ? 0 : 200);
    const lines: string[] = [];
    const sender = report(store, board, lines);
    await sender.start();
    const seqs = await append(store, [queued('c1', 'a', 0), queued('c1', 'b', 1)]);
    while (board.calls < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    away = false;
    sender.boardIsBack();
    await board.holds(seqs, 2_000);
    expect(lines.filter((l) => l.includes('did not take its report'))).toHaveLength(1);

    away = true;
    const more = await append(store, [queued('c1', 'c', 2), queued('c1', 'd', 3), queued('c2', 'e', 4)]);
    await sender.stop(300);
    expect(lines.at(-1)).toContain('2 event(s) of its runs did not reach the board before it stopped');
    expect(board.held.has(more[0]!)).toBe(false);

    // The next life (the same log): from the cursor, so what the board held is not sent again.
    away = false;
    const next = report(store, board);
    await next.start();
    await board.holds(more.slice(0, 2));
    await next.stop();
    expect(board.resent).toBe(0);
    expect([...board.held.keys()]).toEqual([...seqs, ...more.slice(0, 2)]);
  });

  it('a batch the board refuses as malformed is cut down to the event it refuses, which is passed over; a board that keeps none is not asked again', async () => {
    const store = await openTempStore();
    const board = new StandInBoard();
    const seqs = await append(store, [queued('c1', 'a', 0), queued('c1', 'bad', 1), queued('c1', 'c', 2)]);
    board.status = (rows) => (rows.some((r) => (r.data as { runId: string }).runId === 'bad') ? 422 : 200);
    const lines: string[] = [];
    const sender = report(store, board, lines);
    await sender.start();
    await board.holds([seqs[0]!, seqs[2]!]);
    expect(lines.filter((l) => l.includes('refused event'))).toEqual([expect.stringContaining(`event ${seqs[1]} (run.queued)`)]);
    await sender.stop();

    const none = new StandInBoard();
    none.status = () => 501;
    const refusedLines: string[] = [];
    const log = await openTempStore();
    const other = report(log, none, refusedLines);
    await other.start();
    await append(log, [queued('c1', 'z', 0)]);
    while (none.calls < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    await append(log, [queued('c1', 'y', 1)]);
    await other.stop();
    expect(none.calls).toBe(1);
    expect(refusedLines.join('\n')).toContain('keeps no copy');
    expect(refusedLines.join('\n')).not.toContain('did not reach');
  });
});
