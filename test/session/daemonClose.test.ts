import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { claudeAgent } from '../support/computerRuns.ts';
import { DaemonProcess, logRows, waitUntil } from '../support/daemonProcess.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { openTempStore, tempDir } from '../support/tempStore.ts';

describe('runledger daemon closes the sessions of its ended runs', () => {
  it('given a run whose agent announced its session, when the run ends, then the next round closes the session and the audit tells it', async () => {
    const db = join(tempDir(), 'runledger.db');
    const daemon = await DaemonProcess.start(db, ['--exec', claudeAgent('claude-like.sh', 'known-session'), '--tick-s', '1']);
    const runId = await daemon.submit('L', 'a turn');
    expect((await daemon.terminal(runId)).state).toBe('succeeded');
    await waitUntil('the session to be closed', () => logRows(db).some((r) => r.type === 'session.closed'), 10_000);

    const session = logRows(db)
      .filter((r) => r.stream === 'local/session:known-session')
      .map((r) => r.type);
    expect(session).toEqual([
      'session.run.ended',
      'session.close.intended',
      'session.close.due',
      'session.close.claimed',
      'session.read',
      'session.closed',
    ]);
    const audit = await runInProcess(['audit', 'known-session', '--db', db]);
    expect(audit.status, audit.stderr).toBe(0);
    expect(audit.stdout).toMatch(new RegExp(`session\\.close\\.intended\\s+close intended: run ${runId} of lane L ended`));
    expect(audit.stdout).toMatch(/session\.closed\s+closed \(attempt 1\): nothing of it runs any more \(no process of it is alive\)/);

    daemon.signal('SIGTERM');
    expect((await daemon.exit()).code).toBe(0);
    const store = await openTempStore(db);
    const replayed = await replayLog(store, deciders);
    expect(replayed, JSON.stringify(replayed).slice(0, 1_000)).toMatchObject({ ok: true });
  });
});
