/**
 * Cancel per docs/rules.md#computer-behaviour, through the published entry point: the board pushes
 * `run.cancel_requested` to the computer holding the run, so an executing run stops within a second
 * or two, long before the computer's next heartbeat (30 s here) would have told it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/inProcessCli.ts';
import {
  addComputer,
  agentFiles,
  type BoardProcess,
  checkLogs,
  eventsOf,
  isRunning,
  lines,
  readLog,
  runCli,
  startBoard,
  startComputer,
  submit,
  waitFor,
} from './support/cluster.ts';

/** One board for both tests (one server process less): the unclaimed run's test runs before c1 exists. */
let dir: string;
let board: BoardProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runledger-test-'));
  board = await startBoard(`${dir}/board/board.db`, { shared: true });
});

afterAll(async () => {
  await board?.process.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('cancel of an executing run', () => {
  // First, while the board has no computer: nobody can claim the run.
  it('a cancel of a run nobody claimed says it was withdrawn before it was claimed', async () => {
    const runId = await submit(board, 'unclaimed', 'marker=never');
    // In this process (runInProcess): what the cancel says is the point, not its process.
    const cancel = await runInProcess(['cancel', runId, '--server', board.url, '--db', board.db, '--wait']);
    expect(cancel.stdout).toBe(`cancel of ${runId}: withdrawn before it was claimed\nrun ${runId} ended cancelled\n`);
    expect(cancel.status).toBe(0);
  });

  it('a cancel of an executing run ends it cancelled within 2 s of runledger cancel, with a 30 s heartbeat', async () => {
    const token = await addComputer(board.db, 'c1');
    const agent = agentFiles(dir);
    const computer = await startComputer({ dir, id: 'c1', server: board.url, token, agent, args: ['--heartbeat-s', '30'] });

    const runId = await submit(board, 'talk', 'marker=long sleep=20000');
    await waitFor('the agent to start', () => lines(agent.markers).includes('long'));
    const [pid] = lines(agent.pids).map(Number);

    const cancel = await runCli(['cancel', runId, '--server', board.url, '--db', board.db, '--wait', '--wait-s', '15']);
    expect(cancel.stderr).toBe('');
    expect(cancel.stdout).toBe(`cancel of ${runId}: stopping on c1\nrun ${runId} ended cancelled\n`);
    expect(cancel.status).toBe(0);

    // Timed on the board's own clock, from the cancel it took to the completion it got: the CLI's
    // own start-up is not the computer's delay.
    const log = readLog(board.db);
    const asked = eventsOf(log, 'board.cancel.requested', runId)[0]!;
    const finished = eventsOf(log, 'board.run.finished', runId)[0]!;
    expect(finished.data.state).toBe('cancelled');
    expect(finished.at - asked.at).toBeLessThan(2000);
    expect(isRunning(pid!)).toBe(false);
    // The computer learnt it from the push, not from a heartbeat, and decided it once.
    const computerLog = readLog(computer.db);
    expect(eventsOf(computerLog, 'run.cancel.pushed', runId)).toHaveLength(1);
    expect(eventsOf(computerLog, 'run.cancel.decided', runId)).toHaveLength(1);
    await checkLogs([board.db, computer.db]);
  });
});
