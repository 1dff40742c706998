/**
 * One board (`runledger server`) and two computers (`runledger daemon --server`), each a process of
 * its own with a log of its own, on loopback (docs/rules.md#wire-and-cli): claims are granted once, turns of a
 * lane are serialised with a park and a resend, and a computer that dies mid-run is reaped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentFiles,
  addComputer,
  agentFiles,
  type BoardProcess,
  type CliProcess,
  checkLogs,
  connectedComputers,
  eventsOf,
  getRun,
  killAgents,
  markerCounts,
  readLog,
  startBoard,
  startComputer,
  submit,
  waitFor,
  waitForAllTerminal,
  waitForState,
  waitForTerminal,
} from './support/cluster.ts';

/**
 * One board and its two computers for the file's tests, each test on lanes and with markers of its
 * own. The board's lease is short for the test that SIGKILLs a computer (the last: it leaves one),
 * yet five of the computers' heartbeats long: no live turn of the other test is reaped on a loaded machine.
 */
let dir: string;
let board: BoardProcess;
let agent: AgentFiles;
let computers: Record<'c1' | 'c2', { db: string; process: CliProcess }>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runledger-test-'));
  board = await startBoard(`${dir}/board/board.db`, { args: ['--lease-s', '5'], shared: true });
  const [t1, t2] = await Promise.all([addComputer(board.db, 'c1'), addComputer(board.db, 'c2')]);
  agent = agentFiles(dir, { shared: true });
  const [c1, c2] = await Promise.all([
    startComputer({ dir, id: 'c1', server: board.url, token: t1, agent, shared: true }),
    startComputer({ dir, id: 'c2', server: board.url, token: t2, agent, shared: true }),
  ]);
  computers = { c1, c2 };
  await waitFor('both computers on the push stream', async () => (await connectedComputers(board.url)) === 2);
});

afterAll(async () => {
  // The computers first: a computer's stop gives its board up to 5 s to take the last of its report.
  await Promise.all(Object.values(computers ?? {}).map((c) => c.process.stop()));
  await board?.process.stop();
  if (agent) killAgents(agent);
  if (computers) await checkLogs([board.db, computers.c1.db, computers.c2.db]);
  rmSync(dir, { recursive: true, force: true });
});

/** How often each of `markers` was executed (the computers' marker file holds every test's). */
function countsOf(markers: readonly string[]): Record<string, number> {
  const counts = markerCounts(agent.markers);
  return Object.fromEntries(markers.map((m) => [m, counts[m] ?? 0]));
}

function submittedOrder(board: BoardProcess, runIds: readonly string[]): string[] {
  const queued = eventsOf(readLog(board.db), 'board.run.queued');
  const order = (runId: string) => queued.find((e) => e.data.runId === runId)!.data.submittedOrder as number;
  return [...runIds].sort((a, b) => order(a) - order(b));
}

describe('one board, two computers, on loopback', () => {
  it("claims every run exactly once, executes it exactly once, and runs a lane's two turns on the one computer they were offered to, in order", async () => {
    // Both turns of lane "talk" go out before either is claimed: one offer at a time, both go to one
    // computer (a lane's later turn follows its earlier one there, docs/rules.md#dispatch), which runs them in order.
    const talk = await Promise.all([submit(board, 'talk', 'marker=talk-1 sleep=500'), submit(board, 'talk', 'marker=talk-2 sleep=500')]);
    const others = await Promise.all(['x', 'y', 'z'].map((lane) => submit(board, lane, `marker=${lane}-1 sleep=200`)));
    const [first, second] = submittedOrder(board, talk) as [string, string];

    const runs = [...talk, ...others];
    const views = await waitForAllTerminal(board.url, runs);
    expect(views.map((v) => [v.run_id, v.state])).toEqual(runs.map((runId) => [runId, 'succeeded']));
    for (const view of views) expect(view.reply).toMatch(/^done /);

    const log = readLog(board.db);
    for (const runId of runs) expect(eventsOf(log, 'board.run.claimed', runId), `claims of ${runId}`).toHaveLength(1);
    expect(countsOf(['talk-1', 'talk-2', 'x-1', 'y-1', 'z-1'])).toEqual({ 'talk-1': 1, 'talk-2': 1, 'x-1': 1, 'y-1': 1, 'z-1': 1 });

    // Each offer named one computer, and both turns were first offered to the same one; a losing claim
    // (none is expected) would not be recorded, and the second turn was claimed as soon as the first ended.
    const offeredTo = talk.map((runId) => eventsOf(log, 'board.run.offered', runId).map((e) => e.data.computers as string[]));
    for (const offers of offeredTo) for (const computers of offers) expect(computers).toHaveLength(1);
    expect(offeredTo[1]![0]).toEqual(offeredTo[0]![0]);
    expect(eventsOf(log, 'board.request.refused').filter((e) => e.data.code === 'claimed_elsewhere')).toEqual([]);
    const firstEnded = eventsOf(log, 'board.run.finished', first)[0]!.at;
    const secondClaimed = eventsOf(log, 'board.run.claimed', second)[0]!.at;
    expect(secondClaimed).toBeGreaterThanOrEqual(firstEnded);
    expect(secondClaimed - firstEnded).toBeLessThan(2_000);
  });

  it('reaps the run of a computer SIGKILLed mid-run after its lease, and the lane moves on to the other computer', async () => {
    const stuck = await submit(board, 'held', 'marker=stuck sleep=30000');
    const holder = (await waitForState(board.url, stuck, ['running'])).computer_id as 'c1' | 'c2';
    const other = holder === 'c1' ? 'c2' : 'c1';
    // Offered to the holder only (it ran the lane's last turn); when it dies, to the other computer.
    const next = await submit(board, 'held', 'marker=next sleep=100');
    await waitFor('the stuck run to be executing', () => countsOf(['stuck']).stuck === 1);

    computers[holder].process.kill('SIGKILL');
    expect((await computers[holder].process.exited).signal).toBe('SIGKILL');

    const reaped = await waitForTerminal(board.url, stuck, 12_000);
    expect(reaped).toMatchObject({ state: 'resolved', computer_id: holder });
    const done = await waitForTerminal(board.url, next, 10_000);
    expect(done).toMatchObject({ state: 'succeeded', computer_id: other, reply: 'done next' });

    const log = readLog(board.db);
    const resolved = eventsOf(log, 'board.run.resolved', stuck);
    expect(resolved).toHaveLength(1);
    // Reaped no sooner than the lease after its last heartbeat.
    expect(resolved[0]!.at - (resolved[0]!.data.lastHeartbeatAt as number)).toBeGreaterThan(5_000);
    const claims = eventsOf(log, 'board.run.claimed', next);
    expect(claims.map((e) => e.data.computerId)).toEqual([other]);
    expect(claims[0]!.at - resolved[0]!.at).toBeLessThan(2_000);
    expect(countsOf(['stuck', 'next'])).toEqual({ stuck: 1, next: 1 });
    expect((await getRun(board.url, stuck)).state).toBe('resolved');
  });
});
