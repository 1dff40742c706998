/**
 * Seeds the simulator once failed on, each kept with the world it was found in (its size, faults and
 * outage cap): a seed names a history only for one version of the simulator, so when sim/ changes how
 * a seed unfolds, its bug is pinned by the unit test named beside it as well. Each was seen red before
 * its fix.
 */
import { describe, expect, it } from 'vitest';
import { parseFaults } from '../../sim/faults.ts';
import { runWorld } from '../../sim/world.ts';

const world = (seed: number, faults: string, maxOutageMs?: number, boards: 1 | 2 = 1) =>
  runWorld({ seed, faults: parseFaults(faults), size: 'small', boards, ...(maxOutageMs === undefined ? {} : { maxOutageMs }) });

describe('simulator regressions', () => {
  it('seed 3 (crash, disk, board): a completion taken just before a crash is sent by the next life with the same host:pid (test/runtime/outbox: "a container\'s pid 1")', async () => {
    const result = await world(3, 'crash,disk,board', 25_000);
    expect(result.violation).toBeNull();
  });

  it('seed 110 (every fault): a wait due during a disk outage is woken once, not re-armed in a loop (test/computer/outageWaits)', async () => {
    const result = await world(110, 'all', 25_000);
    expect(result.violation).toBeNull();
  });

  it('seed 52 (twin, unreachable): a run skipped after five failed claims is queued again when the board pushes it again (test/lane/transientSkips)', async () => {
    const result = await world(52, 'twin,unreachable');
    expect(result.violation).toBeNull();
  });

  it('seed 69 (board, disk): a board whose start waits out its full disk until the faults stop is up before the world ends (sim/world.ts: the end waits for the board)', async () => {
    const result = await world(69, 'board,disk');
    expect(result.violation).toBeNull();
  });

  it('seed 25 (twin, unreachable): a run offered only to computers that skipped it (their streams up) is offered again once it stays unclaimed with its lane free (test/board/offers: "offered again")', async () => {
    const result = await world(25, 'twin,unreachable');
    expect(result.violation).toBeNull();
  });

  // Seen red before the sim's boards shared the chores' lease (BoardPeers of the shared log, sim/boards.ts):
  // board2 dies and restarts beside board1, and its start recorded every computer disconnected, those whose
  // streams board1 holds included. Now only the lease's holder closes connections, and only those no live
  // board's liveness row holds: the run submitted next is offered and ends.
  it("seed 18, two boards (one board killed and restarted): a restarting board leaves the live board's connections alone (sim/peerTables.ts: the orphans no liveness row holds)", async () => {
    const plan = [{ at: 32_779, kind: 'board' as const, target: 'board2', forMs: 54_000, amount: 0 }];
    const result = await runWorld({ seed: 18, faults: parseFaults('all'), size: 'small', boards: 2, plan, keepRuns: [1] });
    expect(result.violation).toBeNull();
  });

  // Seen red before the boards shared the runs' heartbeats (BoardPeers.heard/lastHeard on the shared log's
  // run_heartbeats): a twin of c1 takes c1's stream on board1, c1's own stream moves to board2, and board2,
  // which never heard the run's heartbeats, reaped it at once though c1 heartbeats it to board1.
  it("seed 343, two boards (every fault): a run heartbeated to one board is not reaped by the other (the lease holder reads every board's heartbeats)", async () => {
    const result = await world(343, 'all', undefined, 2);
    expect(result.violation).toBeNull();
  });

  // Seen red before hooks were taken under the chores' lease epoch (runtime/actors/effectConsumer.ts, EpochTakes):
  // board1, the chores' holder, takes a hook and dies while it runs; board2 takes the lease over, but its
  // hook outbox could not tell the take's writer gone (another host's process cannot be probed), and
  // board1's next life, which would know it for its own, is not the holder: the hook was never recorded
  // interrupted. Now a take names its epoch, and the holder of a later one records it interrupted.
  it('seed 23, two boards (a board killed): a hook cut by the death of the lease holder is recorded interrupted by the next holder (test/board/hooks/leaseHolderDeath)', async () => {
    const plan = [{ at: 21_868, kind: 'board' as const, target: 'board1', forMs: 68_000, amount: 0 }];
    const result = await runWorld({ seed: 23, faults: parseFaults('all'), size: 'small', boards: 2, plan, keepRuns: [0] });
    expect(result.violation).toBeNull();
  });

  // Seen red before a board recorded again the streams it holds (adapters/push/pushHub.ts, connectAgain; test/sim/heldStreams):
  // the shared log full for 9 s kept board1 from renewing the chores' lease and its liveness row, board2 took the
  // lease and its orphan round recorded offline the three computers whose streams board1 still held; their
  // streams never closed, so none connected again, and the run submitted next was offered to nobody, for ever.
  it("seed 25, two boards (crash, cut, disk): a full log that cost the chores' lease leaves no computer offline whose stream a live board holds", async () => {
    const plan = [
      { at: 73_495, kind: 'crash' as const, target: 'c3', forMs: 6_000, amount: 0 },
      { at: 95_343, kind: 'cut' as const, target: 'c2', forMs: 15_000, amount: 0 },
      { at: 99_395, kind: 'disk' as const, target: 'board', forMs: 9_000, amount: 0 },
    ];
    const faults = parseFaults('crash,stop,twin,skew,net,cut,unreachable,disk,timers,split');
    const result = await runWorld({ seed: 25, faults, size: 'small', boards: 2, plan, keepRuns: [1] });
    expect(result.violation).toBeNull();
  });

  // Seen red before a computer's start left alone the retry timer armed while its outboxes opened
  // (test/computer/restartRetryTimer): c2 crashed with its completion in flight; the next life's resend, whose run
  // token's claim timed out on a lossy link, failed and armed its retry; the start then put back the timer of the
  // retry the log held when it began, already due, and the completion was never sent again.
  it('seed 34, two boards (crash, net): a completion resent as a computer starts, and failed, is retried (its timer armed)', async () => {
    const plan = [
      { at: 27_065, kind: 'net' as const, target: 'c2', forMs: 90_000, amount: 60 },
      { at: 55_593, kind: 'crash' as const, target: 'c2', forMs: 6_000, amount: 0 },
    ];
    const result = await runWorld({ seed: 34, faults: parseFaults('crash,net'), size: 'small', boards: 2, plan, keepRuns: [0] });
    expect(result.violation).toBeNull();
  });

  it('seed 222, two boards (every fault): a completion sent just before its clock stepped back is in flight, not a wait with no timer (sim/invariants.ts: completionInFlight)', async () => {
    const result = await world(222, 'all', undefined, 2);
    expect(result.violation).toBeNull();
  });

  it('seed 6, two boards (net, cut, split): a late close from the board a computer left ends nothing, so that board does not reap its live run (test/board/twoBoardStreams)', async () => {
    const result = await world(6, 'net,cut,split', undefined, 2);
    expect(result.violation).toBeNull();
  });

  // Seen red before a claim granted while its login was at its usage limit was held (actors/lane/decideQueue.ts, answerClaim;
  // test/lane/usageLimits, test/run/runLimit): c2's claim of a lane-1 run went out, then its lane-2 run stopped at the
  // login's limit, then the claim was granted and the run started 117 s before the reset (loginLimitHolds).
  it('seed 361 (twin, net): a claim granted after its login met its usage limit is held, heartbeated, until the reset', async () => {
    const plan = [
      { at: 37_966, kind: 'twin' as const, target: 'c1', forMs: 72_000, amount: 0 },
      { at: 240_449, kind: 'net' as const, target: 'c2', forMs: 77_000, amount: 0 },
    ];
    const result = await runWorld({ seed: 361, faults: parseFaults('twin,net'), size: 'normal', boards: 1, plan, keepRuns: [0, 1, 3, 8, 9] });
    expect(result.violation).toBeNull();
  });

  it('seed 27, two boards (twin): a claim granted after its login met its usage limit is held until the reset', async () => {
    const result = await world(27, 'twin', undefined, 2);
    expect(result.violation).toBeNull();
  });

  // Seen red before the world went on while a hook cut by a crash awaited its record (sim/world.ts, Invariants.hookUnrecorded):
  // board1, the chores' holder, died 4 s before the world ended with every run terminal, so no board could take the
  // lease over and record the hook interrupted in time; hookAtMostOnce called the hook unrecorded.
  it('seed 5, two boards (a board killed near the end): the world ends once a hook its crash cut is recorded interrupted', async () => {
    const plan = [
      { at: 16_777, kind: 'cut' as const, target: 'c2', forMs: 37_000, amount: 0 },
      { at: 82_251, kind: 'net' as const, target: 'c1', forMs: 38_000, amount: 36 },
      { at: 91_002, kind: 'crash' as const, target: 'c1', forMs: 16_000, amount: 0 },
      { at: 119_900, kind: 'net' as const, target: 'c2', forMs: 53_000, amount: 0 },
      { at: 138_399, kind: 'twin' as const, target: 'c2', forMs: 59_000, amount: 0 },
      { at: 176_136, kind: 'board' as const, target: 'board1', forMs: 11_000, amount: 0 },
    ];
    const result = await runWorld({ seed: 5, faults: parseFaults('crash,twin,net,cut,board'), size: 'small', boards: 2, plan, keepRuns: [0] });
    expect(result.violation).toBeNull();
  });
});
