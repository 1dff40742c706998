import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { computerLockPath } from '../../apps/computer/processLock.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { claudeAgent, fixtureAgent } from '../support/computerRuns.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { runledger } from '../support/processes.ts';
import { openTempStore, tempDbPath } from '../support/tempStore.ts';

// A failed turn's exit status, and the refusal beside a live daemon, through the real entry point; the
// other turns in this process, through the same dispatch (test/support/inProcessCli.ts).
describe('runledger run', () => {
  it('given a turn that succeeds, then it prints the reply, exits 0, and the next turn of the lane resumes its session', async () => {
    const db = tempDbPath();
    const first = await runInProcess([
      'run',
      '--lane',
      'L',
      '--prompt',
      'hello',
      '--exec',
      claudeAgent('claude-like.sh', 'known-session'),
      '--db',
      db,
    ]);
    expect(first).toMatchObject({ status: 0, stderr: '' });
    expect(first.stdout).toMatch(/^fresh: You have about 2 hours for this turn\..*\n\nhello\n$/s);

    const second = await runInProcess([
      'run',
      '--lane',
      'L',
      '--prompt',
      'again',
      '--exec',
      claudeAgent('claude-like.sh'),
      '--timeout-s',
      '0',
      '--db',
      db,
      '--json',
    ]);
    expect(second.status).toBe(0);
    const view = JSON.parse(second.stdout) as Record<string, unknown>;
    expect(view).toMatchObject({ ok: true, lane_session: 'known-session', recorded: true, error: null });
    expect(view.reply).toMatch(/^resumed: There is no time limit on this turn/);
    const store = await openTempStore(db);
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
    expect((await store.readEntity(`run:${String(view.run_id)}`)).map((e) => e.type)).toEqual([
      'run.handed.over',
      'run.execution.requested',
      'run.process.began',
      'run.session.announced',
      'lane.session.remembered',
      'run.process.exited',
      'run.settled',
    ]);
  });

  it('given a turn that fails, then it exits 1 with the error', () => {
    const db = tempDbPath();
    const result = runledger(['run', '--lane', 'L', '--prompt', 'x', '--exec', fixtureAgent('echo.sh', '3'), '--db', db]);
    expect(result).toMatchObject({ status: 1, stdout: '' });
    expect(result.stderr).toBe('runledger run: the turn failed: the agent exited with code 3: echo: done\n');
  });

  it('given --dry-run, then the turn runs and nothing is written: not even the log file', async () => {
    const db = tempDbPath();
    const result = await runInProcess(['run', '--lane', 'L', '--prompt', 'try', '--dry-run', '--exec', claudeAgent('claude-like.sh'), '--db', db]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^fresh: /);
    expect(existsSync(db)).toBe(false);
    expect(readdirSync(dirname(db))).toEqual([]);
  });

  it('given --dry-run on a log with a remembered session, then it resumes nothing and adds no row', async () => {
    const db = tempDbPath();
    const store = await openTempStore(db);
    await store.append({
      expected: { 'local/run:turn-0': 0 },
      events: [
        {
          stream: 'local/run:turn-0',
          type: 'lane.session.remembered',
          data: { lane: 'L', sessionId: 'known-session', runId: 'turn-0' },
          at: Date.now(),
        },
      ],
    });
    const dry = await runInProcess([
      'run',
      '--lane',
      'L',
      '--prompt',
      'q',
      '--dry-run',
      '--exec',
      claudeAgent('claude-like.sh', 'other-session'),
      '--db',
      db,
      '--json',
    ]);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      ok: true,
      recorded: false,
      lane_session: 'other-session',
      reply: expect.stringMatching(/^fresh: /),
    });
    expect((await store.readAll(0, 100)).map((e) => e.type)).toEqual(['lane.session.remembered']);
  });

  it('given a daemon holding computer local on the log, then a recorded run is refused, saying why', () => {
    const db = tempDbPath();
    // The lock a live daemon holds: this test's own pid is alive.
    writeFileSync(computerLockPath(db, 'local'), `${process.pid}\n`);
    const result = runledger(['run', '--lane', 'L', '--prompt', 'p', '--exec', fixtureAgent('echo.sh'), '--db', db]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/computer local on .* is already running \(pid \d+.*use --dry-run to record nothing/);
  });
});
