/**
 * Leases and budgets are measured on a monotonic clock, the wall clock only stamps events
 * (docs/architecture.md#time): real processes whose wall clock is stepped by hand (a preload that moves
 * Date at SIGUSR2, as libfaketime would) or whose whole process is frozen (SIGSTOP) for longer than the
 * lease. A step of the board's clock reaps nothing alive and leaves nothing dead unreaped; a step of the
 * computer's clock cuts no budget short or long; a daemon frozen past its lease does not reap its own run.
 * The cases wait on real leases and budgets, each on processes and folders of its own: they run at once
 * (describe.concurrent), the two computers of one board one after the other.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { tempDir } from '../support/tempStore.ts';
import { ownScope } from '../support/testScope.ts';
import {
  addComputer,
  agentFiles,
  type BoardProcess,
  type CliProcess,
  connectedComputers,
  MARKER_AGENT,
  repoRoot,
  startBoard,
  startComputer,
  submit,
  waitFor,
  waitForState,
  waitForTerminal,
} from './support/cluster.ts';

/** The environment that makes a runledger process's wall clock step by `stepMs` at each SIGUSR2. */
function steppedClock(stepMs: number): Record<string, string> {
  const preload = join(repoRoot, 'test/fixtures/e2e/clockStep.mjs');
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${preload}`.trim(), CLOCK_STEP_MS: String(stepMs) };
}

/** Steps `target`'s wall clock and waits until it has. */
async function step(target: CliProcess): Promise<void> {
  const steps = (target.stdout.match(/clock stepped/g) ?? []).length;
  target.kill('SIGUSR2');
  await target.waitForOutput(new RegExp(`(clock stepped[^]*){${steps + 1}}`), 5_000);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.concurrent('a step of the board’s wall clock', () => {
  it(
    '+300 s reaps no live run: a turn heartbeating through the step ends succeeded with its reply',
    ownScope(async ({ expect }) => {
      const dir = tempDir();
      const board = await startBoard(join(dir, 'board', 'board.db'), { args: ['--lease-s', '3'], env: steppedClock(300_000) });
      const agent = agentFiles(dir);
      await startComputer({ dir, id: 'c1', server: board.url, token: await addComputer(board.db, 'c1'), agent });
      const runId = await submit(board, 'l1', 'marker=through sleep=4500');
      await waitForState(board.url, runId, ['running']);
      await step(board.process);
      const end = await waitForTerminal(board.url, runId, 15_000);
      expect(end.state, board.process.describe()).toBe('succeeded');
      expect(end.reply).toBe('done through');
    }),
  );

  it(
    '−3600 s still reaps a dead computer’s run within its lease',
    ownScope(async ({ expect }) => {
      const dir = tempDir();
      const board = await startBoard(join(dir, 'board', 'board.db'), { args: ['--lease-s', '2'], env: steppedClock(-3_600_000) });
      const agent = agentFiles(dir);
      const computer = await startComputer({ dir, id: 'c1', server: board.url, token: await addComputer(board.db, 'c1'), agent });
      const runId = await submit(board, 'l1', 'marker=dead sleep=30000');
      await waitForState(board.url, runId, ['running']);
      await step(board.process);
      computer.process.kill('SIGKILL');
      const killedAt = Date.now();
      const end = await waitForTerminal(board.url, runId, 12_000);
      expect(end.state).toBe('resolved');
      // The lease (2 s) and a round of the reaper, with room for a loaded machine.
      expect(Date.now() - killedAt).toBeLessThan(10_000);
    }),
  );
});

describe.concurrent('a step of the computer’s wall clock', () => {
  // One board for the file's computers, each test's on a lane of its own (a lane's next turn would be
  // offered to the computer of its last) and the only one connected when its turn is submitted: its
  // tests one after the other (it.sequential), beside the other cases.
  let boardDir: string;
  let board: BoardProcess;
  beforeAll(async () => {
    boardDir = mkdtempSync(join(tmpdir(), 'runledger-test-'));
    board = await startBoard(join(boardDir, 'board', 'board.db'), { shared: true });
  });
  afterAll(async () => {
    await board?.process.stop();
    rmSync(boardDir, { recursive: true, force: true });
  });

  /** A computer `id` whose wall clock steps by `stepMs` at `step`, with a budget of `timeoutS`, the board's one computer. */
  async function steppedComputer(id: string, stepMs: number, timeoutS: number) {
    const dir = tempDir();
    const agent = agentFiles(dir);
    const computer = await startComputer({
      dir,
      id,
      server: board.url,
      token: await addComputer(board.db, id),
      agent: { ...agent, env: { ...agent.env, ...steppedClock(stepMs) } },
      args: ['--timeout-s', String(timeoutS)],
    });
    await waitFor(`${id} the board's one computer`, async () => (await connectedComputers(board.url)) === 1);
    return computer;
  }

  it.sequential(
    '−3600 s still kills the turn at its budget',
    ownScope(async ({ expect }) => {
      const computer = await steppedComputer('back', -3_600_000, 2);
      const runId = await submit(board, 'back', 'marker=over sleep=30000');
      await waitForState(board.url, runId, ['running']);
      const runningAt = Date.now();
      await step(computer.process);
      const end = await waitForTerminal(board.url, runId, 12_000);
      expect(end.state).toBe('failed');
      expect(end.error).toMatch(/timed out after about 2 seconds/);
      expect(Date.now() - runningAt).toBeLessThan(10_000);
    }),
  );

  it.sequential(
    '+3600 s kills nothing early: the turn runs to its budget',
    ownScope(async ({ expect }) => {
      // A budget far below the step (a budget on the wall clock would end at once) but far above the
      // turn: a loaded machine slows its start (a 4 s budget for 2.5 s of sleep failed at four times the load).
      const computer = await steppedComputer('ahead', 3_600_000, 30);
      const runId = await submit(board, 'ahead', 'marker=in sleep=2500');
      await waitForState(board.url, runId, ['running']);
      await step(computer.process);
      const end = await waitForTerminal(board.url, runId, 12_000);
      expect(end.state, computer.process.describe()).toBe('succeeded');
      expect(end.reply).toBe('done in');
    }),
  );
});

describe.concurrent('a daemon frozen for longer than its lease', () => {
  it(
    'does not reap its own live run when it wakes: the turn ends succeeded with its reply',
    ownScope(async ({ expect }) => {
      const dir = tempDir();
      const agent = agentFiles(dir);
      const daemon = await startBoard(join(dir, 'daemon', 'daemon.db'), {
        command: 'daemon',
        args: ['--lease-s', '2', '--heartbeat-s', '1', '--exec', MARKER_AGENT],
        env: agent.env,
      });
      await daemon.process.waitForOutput(/push stream connected/);
      const runId = await submit(daemon, 'l1', 'marker=frozen sleep=4000');
      await waitForState(daemon.url, runId, ['running']);
      // Frozen as a laptop's lid closed: longer than the lease (its last heartbeat older still), its agent
      // running on meanwhile, and on for 1.5 s of the daemon's rounds after it wakes.
      daemon.process.kill('SIGSTOP');
      try {
        await pause(2_500);
      } finally {
        daemon.process.kill('SIGCONT');
      }
      const end = await waitForTerminal(daemon.url, runId, 15_000);
      expect(end.state, daemon.process.describe()).toBe('succeeded');
      expect(end.reply).toBe('done frozen');
    }),
  );
});
