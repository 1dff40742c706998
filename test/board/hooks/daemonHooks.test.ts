import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deciders } from '../../../replay/deciders.ts';
import { replayLog } from '../../../replay/replayLog.ts';
import { claudeAgent } from '../../support/computerRuns.ts';
import { DaemonProcess, logRows, waitUntil } from '../../support/daemonProcess.ts';
import { runInProcess } from '../../support/inProcessCli.ts';
import { runledger } from '../../support/processes.ts';
import { openTempStore, tempDir } from '../../support/tempStore.ts';

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

describe('runledger daemon --hook, subscribe and adopt, end to end', () => {
  it('given a daemon with hooks, a subscription and an adoption request, when runs go through it, then hooks run once each, notices are filed and the lane adopts', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    const file = join(dir, 'hooks.log');
    const hook = `printf '%s\\n' "$(cat)" >> '${file}'`;

    const subscribed = runledger(['subscribe', 'known-session', '--lane', 'L', '--kind', 'run.ended', '--id', 'sub1', '--db', db, '--json']);
    expect(subscribed.stderr).toBe('');
    expect(JSON.parse(subscribed.stdout)).toMatchObject({ subscription_id: 'sub1', session_id: 'known-session', lane: 'L', kinds: ['run.ended'] });

    const daemon = await DaemonProcess.start(db, [
      '--exec',
      claudeAgent('claude-like.sh', 'known-session'),
      '--tick-s',
      '1',
      '--hook',
      `on_run_claimed=${hook}`,
      '--hook',
      `on_run_started=${hook}`,
      '--hook',
      `on_run_ended=${hook}`,
    ]);
    const runId = await daemon.submit('L', 'first turn');
    expect((await daemon.terminal(runId)).state).toBe('succeeded');

    const adopt = runledger(['adopt', 'M', 'known-session', '--db', db]);
    expect(adopt.stdout).toMatch(/^lane M asked to adopt session known-session \(request 1\)/);
    await waitUntil('the hooks, the notice and the adoption', () => {
      const rows = logRows(db);
      return (
        lines(file).some((l) => l.includes('on_run_ended')) &&
        rows.some((r) => r.type === 'notice.filed') &&
        rows.some((r) => r.type === 'adoption.adopted')
      );
    });

    const rows = logRows(db);
    const decided = rows.filter((r) => ['board.run.claimed', 'board.run.running', 'board.run.finished'].includes(r.type)).length;
    await waitUntil('every hook to be recorded', () => logRows(db).filter((r) => r.type === 'hook.exited').length === decided, 5_000);
    const ran = lines(file).map((l) => JSON.parse(l) as { hook: string; run_id: string; lane: string });
    expect(ran.map((p) => p.hook)).toContain('on_run_claimed');
    expect(ran.map((p) => p.hook)).toContain('on_run_ended');
    expect(ran).toHaveLength(decided);
    expect(ran.every((p) => p.run_id === runId && p.lane === 'L')).toBe(true);

    const notice = rows.find((r) => r.type === 'notice.filed')!;
    expect(notice).toMatchObject({
      stream: 'inbox:known-session',
      data: { subscriptionId: 'sub1', runId, text: `run ${runId} of lane L ended: succeeded` },
    });
    expect(rows.find((r) => r.type === 'adoption.adopted')).toMatchObject({
      stream: 'lane:M',
      data: { sessionId: 'known-session', computerId: 'local' },
    });

    const audit = await runInProcess(['audit', 'known-session', '--db', db]);
    expect(audit.stdout).toMatch(/notice\.filed\s+notice #1 filed for subscription sub1: run \S+ of lane L ended: succeeded/);
    expect(audit.stdout).toMatch(/adoption\.adopted\s+adopted: lane M's next turns run in session known-session on local/);
    daemon.signal('SIGTERM');
    expect((await daemon.exit()).code).toBe(0);
    // Every decision of the board, the computer, the adoption and the inbox re-derives the same.
    const store = await openTempStore(db);
    const replayed = await replayLog(store, deciders);
    expect(replayed, JSON.stringify(replayed).slice(0, 1_000)).toMatchObject({ ok: true });
  });
});
