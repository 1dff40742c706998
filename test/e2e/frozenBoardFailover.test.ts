/**
 * A board frozen (SIGSTOP: its socket open, nothing answered) on a PostgreSQL log of two
 * (docs/rules.md#postgresql-board): the computer on it hears no pong, leaves it for the other board
 * within the run lease, and the turn in flight completes there, succeeded with its reply; it is never
 * reaped by the board that holds the chores while its completion waits on the frozen one. Real
 * processes, real PostgreSQL; short leases.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { freshPostgresLog, postgresLogRows } from '../support/postgresLog.ts';
import { tempDir } from '../support/tempStore.ts';
import {
  addComputer,
  addSubmitToken,
  agentFiles,
  startComputer,
  startPostgresServer,
  submit,
  waitForState,
  waitForTerminal,
} from './support/cluster.ts';

const LEASE_S = 6;

describe('a computer on a frozen board of two', () => {
  it('fails over to the other board within the lease, and its turn in flight ends succeeded there with its reply', async () => {
    const url = await freshPostgresLog();
    const dir = tempDir();
    const args = ['--lease-s', String(LEASE_S), '--board-lease-s', '1'];
    const [token, computerToken] = [await addSubmitToken(url, 'test'), await addComputer(url, 'c1')];
    const [other, frozen] = await Promise.all([startPostgresServer(url, args), startPostgresServer(url, args)]);
    // Whichever held the chores (the reaping), the other board holds them within a board lease of the freeze.
    const agent = agentFiles(dir);
    const computer = await startComputer({ dir, id: 'c1', server: `${frozen.url},${other.url}`, token: computerToken, agent });
    expect(computer.process.stdout).toContain(`push stream connected (to ${frozen.url})`);

    const runId = await submit({ url: other.url, token }, 'l1', 'marker=flight sleep=3000');
    await waitForState(other.url, runId, ['running']);
    frozen.process.kill('SIGSTOP');
    onTestFinished(() => frozen.process.kill('SIGCONT'));
    const frozenAt = Date.now();
    await computer.process.waitForOutput(new RegExp(`push stream connected \\(to ${other.url.replace(/[.:/]/g, '\\$&')}\\)`), LEASE_S * 1000);
    const failoverMs = Date.now() - frozenAt;

    const end = await waitForTerminal(other.url, runId, 15_000);
    expect(end.state, computer.process.describe()).toBe('succeeded');
    expect(end.reply).toBe('done flight');
    expect(failoverMs).toBeLessThan(LEASE_S * 1000);
    const log = await postgresLogRows(url);
    expect(log.filter((e) => e.type === 'board.run.resolved' && e.data.runId === runId)).toEqual([]);
    process.stderr.write(`frozen board: the computer failed over ${failoverMs} ms after the SIGSTOP\n`);
    frozen.process.kill('SIGCONT');
  });
});
