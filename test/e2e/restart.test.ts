/**
 * `runledger daemon` (board and computer in one process, one log) SIGKILLed mid-run and started
 * again on the same log (docs/rules.md#computer-behaviour, "Restart"): the run that was executing is never executed a
 * second time, later runs complete, and the log lost nothing.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/tempStore.ts';
import {
  agentFiles,
  checkLogsWithCli,
  eventsOf,
  freePort,
  isRunning,
  lines,
  MARKER_AGENT,
  markerCounts,
  readLog,
  startBoard,
  submit,
  waitFor,
  waitForTerminal,
} from './support/cluster.ts';

describe('a daemon SIGKILLed mid-run and restarted on the same log', () => {
  it('does not execute the interrupted run again, completes later runs, and keeps a gapless log that replays and rebuilds', async () => {
    const dir = tempDir();
    const db = join(dir, 'daemon', 'runledger.db');
    const agent = agentFiles(dir);
    const port = await freePort();
    const start = () =>
      startBoard(db, { command: 'daemon', port, args: ['--heartbeat-s', '1', '--exec', MARKER_AGENT], env: agent.env }).then(async (daemon) => {
        await daemon.process.waitForOutput(/push stream connected/);
        return daemon;
      });

    const first = await start();
    const warmUp = await submit(first, 'talk', 'marker=before sleep=50');
    expect(await waitForTerminal(first.url, warmUp)).toMatchObject({ state: 'succeeded' });
    const interrupted = await submit(first, 'talk', 'marker=interrupted sleep=30000');
    await waitFor('the run to be executing', () => markerCounts(agent.markers).interrupted === 1);
    const agentPid = Number(lines(agent.pids).at(-1));
    expect(isRunning(agentPid)).toBe(true);

    first.process.kill('SIGKILL');
    expect((await first.process.exited).signal).toBe('SIGKILL');

    const second = await start();
    const ended = await waitForTerminal(second.url, interrupted);
    expect(['failed', 'resolved']).toContain(ended.state);
    if (ended.state === 'failed') expect(ended.error).toContain('interrupted by a restart');
    // Its process group, left alive by the SIGKILL, was stopped by the restart, not adopted or rerun.
    await waitFor('the interrupted agent to be stopped', () => !isRunning(agentPid), 10_000);

    const later = await Promise.all([submit(second, 'talk', 'marker=after-1 sleep=50'), submit(second, 'other', 'marker=after-2 sleep=50')]);
    for (const runId of later) expect(await waitForTerminal(second.url, runId)).toMatchObject({ state: 'succeeded' });
    expect(markerCounts(agent.markers)).toEqual({ before: 1, interrupted: 1, 'after-1': 1, 'after-2': 1 });

    const log = readLog(db);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    expect(eventsOf(log, 'run.process.began', interrupted)).toHaveLength(1);
    expect(eventsOf(log, 'run.found.interrupted', interrupted)).toHaveLength(1);
    expect(eventsOf(log, 'board.run.claimed', interrupted)).toHaveLength(1);

    expect((await second.process.stop()).code).toBe(0);
    await checkLogsWithCli([db]);
  });
});
