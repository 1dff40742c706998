/**
 * The board page's snapshot, from hand-made states: the stuck banner's sentence for each way no
 * computer takes work, and the lane rows that fold a run's copies on several computers into one.
 */
import { describe, expect, it } from 'vitest';
import { type BoardRun, type BoardState, initialBoardState } from '../../actors/board/boardState.ts';
import { initialQueueState, type QueueState } from '../../actors/lane/queueState.ts';
import { formatStatus, statusView } from '../../projections/statusView.ts';
import { boardSnapshot } from '../../web/boardSnapshot.ts';

const AT = 1_000_000;

function boardWith(runIds: string[], connected: string[]): BoardState {
  const board = initialBoardState();
  runIds.forEach((runId, i) => {
    const run: BoardRun = {
      runId,
      lane: 'l',
      prompt: 'p',
      agentId: null,
      timeoutS: null,
      submittedOrder: i,
      submittedAt: AT - 10_000,
      state: 'queued',
      computerId: null,
      incarnation: null,
      claimedAt: null,
      cancelRequested: false,
      offeredTo: [],
      reply: null,
    };
    board.runs[runId] = run;
  });
  board.lanes.l = { unclaimed: [...runIds], holder: null, waiters: [], lastComputer: null };
  if (runIds.length > 0) board.waiting.l = true;
  board.connected = connected;
  for (const c of connected) board.computers[c] = { tokenHash: 'h', connectedAt: 1, lastSeenAt: null };
  return board;
}

function queueHolding(runIds: string[], change: Partial<QueueState> = {}): QueueState {
  const queue = { ...initialQueueState(), ...change };
  runIds.forEach((runId, arrival) => {
    queue.runs[runId] = {
      runId,
      lane: 'l',
      agentId: null,
      arrival,
      status: 'waiting',
      claimAttempts: 0,
      busyWaits: 0,
      notBefore: 0,
      resentWhileClaiming: false,
    };
  });
  queue.lanes.l = { waiting: [...runIds], active: null };
  return queue;
}

const snapshot = (board: BoardState, queues: Record<string, QueueState> = {}) => boardSnapshot({ board, queues, laneSessions: {} }, AT);

describe('the stuck banner', () => {
  it('stuck_banner_names_each_connected_computer_that_drains_or_is_held', () => {
    const board = boardWith(['r1', 'r2'], ['c1', 'c2']);
    board.draining.c1 = true;
    const stuck = snapshot(board, { c2: queueHolding([], { held: true }) }).stuck;
    expect(stuck).toEqual({
      kind: 'no_taker',
      text: '2 runs wait but no connected computer takes work (c1 is draining, c2 is held): start another computer (`runledger daemon`); a draining one takes work again once its daemon restarts, a held one once its hold is lifted.',
    });
  });

  it('stuck_banner_is_silent_while_one_computer_takes_work_or_nothing_waits', () => {
    const board = boardWith(['r1'], ['c1', 'c2']);
    board.draining.c1 = true;
    expect(snapshot(board).stuck).toBeNull();
    expect(snapshot(boardWith([], [])).stuck).toBeNull();
    // The longest wait is still handed to the page, which calls it out past its threshold.
    expect(snapshot(board).longestWait).toEqual({ runId: 'r1', since: AT - 10_000, warnAfterMs: 5 * 60_000 });
  });
});

describe('the lane rows', () => {
  it('lane_rows_fold_a_run_held_by_several_computers_into_one_row', () => {
    const board = boardWith(['r1', 'r2'], ['c1', 'c2']);
    const lanes = snapshot(board, { c1: queueHolding(['r1', 'r2']), c2: queueHolding(['r1', 'r2']) }).lanes;
    expect(lanes).toHaveLength(1);
    expect(lanes[0]!.runs.map((r) => r.runId)).toEqual(['r1', 'r2']);
    expect(lanes[0]!.runs[0]!.copies.map((c) => c.computer)).toEqual(['c1', 'c2']);
    expect(lanes[0]!.runs[0]!.board).toBe('queued');
  });
});

describe('the longest wait for a computer', () => {
  it("a lane's first turn has waited since it was submitted", () => {
    const board = boardWith(['r1'], ['c1']);
    expect(snapshot(board).longestWait).toMatchObject({ runId: 'r1', since: AT - 10_000 });
  });

  it('a later turn waits from when its lane freed, not from its submission: a turn behind a 20-minute one is not called stuck', () => {
    const board = boardWith(['r1'], ['c1']);
    // An earlier turn of the lane ran on c1 and ended just now; r1 was submitted 20 minutes ago, behind it.
    board.runs.r1 = { ...board.runs.r1!, submittedAt: AT - 20 * 60_000 };
    board.lanes.l!.lastComputer = 'c1';
    const becameNext = new Map<string, number>();
    const at = (t: number) => boardSnapshot({ board, queues: {}, laneSessions: {} }, t, { waitWarnMs: 5 * 60_000, becameNext }).longestWait;
    expect(at(AT)).toMatchObject({ runId: 'r1', since: AT });
    // Seen again later, it keeps the time it became next.
    expect(at(AT + 60_000)).toMatchObject({ runId: 'r1', since: AT });
  });
});

describe('a login at its usage limit', () => {
  it('usage_limited_login_shows_on_its_computer_until_its_time_with_the_agents_words_and_its_run_waits_parked', () => {
    const board = boardWith(['r1'], ['c1']);
    const queue = queueHolding(['r1'], { loginLimits: { alice: { until: AT + 60_000, strikes: 1, words: "You've hit your usage limit." } } });
    Object.assign(queue.runs.r1!, { agentId: 'alice', notBefore: AT + 60_000, claimHeld: true });
    const view = snapshot(board, { c1: queue });
    expect(view.computers[0]?.limits).toEqual([{ login: 'alice', until: AT + 60_000, words: "You've hit your usage limit." }]);
    expect(view.lanes[0]?.runs[0]).toMatchObject({
      state: 'parked',
      until: AT + 60_000,
      why: "its login's usage limit was reached: it runs again then",
    });
    // `runledger status` says the same, in a line a person reads.
    expect(formatStatus(statusView(board, { c1: queue }, AT))).toContain(
      `  lane l: waiting out its login's usage limit r1 (runs again in 60 s)\n  login alice: at its usage limit until ${new Date(AT + 60_000).toISOString()} (in 60 s), starts nothing: “You've hit your usage limit.”`,
    );
    // Once its time has come, it is no longer shown as limited.
    expect(boardSnapshot({ board, queues: { c1: queue }, laneSessions: {} }, AT + 60_000).computers[0]?.limits).toEqual([]);
  });
});
